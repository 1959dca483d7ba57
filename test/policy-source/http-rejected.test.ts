// The rejected items of a control-plane sync as /explain shows them: a source URL when the item names its kind and name, whether its last good version stays, and one warning each.
import test from "ava";
import { pino } from "pino";
import { kindAndName } from "../../extproc/policy-source/last-good.js";
import { reportRejected } from "../../extproc/policy-source/http-rejected.js";

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  return { log: pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s)) }), lines };
}

const MESH = "http://cp:5681/meshes/default";
const violations = [{ field: "spec", message: "must be defined" }];

test("rejected items › given items with and without kind and name, when reported, then only those naming both get a source URL, and each keeps its fields", (t) => {
  const c = capturingLogger();
  const rejected = reportRejected(
    [
      { kind: "MeshTrafficPermission", name: "a", violations },
      { kind: "MeshTrafficPermission", violations },
      { name: "b", violations },
      { violations },
    ],
    new Set(),
    MESH,
    c.log,
  );
  t.deepEqual(rejected, [
    { kind: "MeshTrafficPermission", name: "a", violations, source: `${MESH}/MeshTrafficPermission/a`, keptLastGood: false },
    { kind: "MeshTrafficPermission", violations, keptLastGood: false },
    { name: "b", violations, keptLastGood: false },
    { violations, keptLastGood: false },
  ]);
});

test("rejected items › given a rejected item whose last good version is in force, when reported, then it says so and its warning says it stays; the others say the rest apply", (t) => {
  const c = capturingLogger();
  const rejected = reportRejected(
    [
      { kind: "MeshTrafficPermission", name: "kept", violations },
      { kind: "MeshTrafficPermission", name: "new", violations },
    ],
    new Set([kindAndName("MeshTrafficPermission", "kept")]),
    MESH,
    c.log,
  );
  t.deepEqual(rejected.map((r) => r.keptLastGood), [true, false]);
  t.deepEqual(
    c.lines.map((l) => [l.level, l.msg, l.kind, l.name, l.keptLastGood, l.violations]),
    [
      [40, "rejected an invalid new version of a policy; its last good version stays in force", "MeshTrafficPermission", "kept", true, violations],
      [40, "rejected an invalid resource from the control plane; the others apply", "MeshTrafficPermission", "new", false, violations],
    ],
  );
});
