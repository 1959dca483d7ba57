// dir source › a rejected new version of a policy that this dataplane had set aside (it selects another dataplane)
// keeps overriding an earlier file's version of the same key: a rejection never brings an older version into force.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirPolicySource } from "../../extproc/policy-source/dir-source.js";
import type { Policy } from "../../extproc/policy/model/types.js";

const DATAPLANE = { mesh: "default", name: "dp", proxyType: "Sidecar" as const, inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };

/** MTP `x` on service `svc` with `action`, in block or flow YAML (the plain reader and the YAML library read them). */
function mtp(svc: string, action: string, style: "block" | "flow"): string {
  if (style === "flow") return `{type: MeshTrafficPermission, mesh: default, name: x, spec: {targetRef: {kind: MeshService, name: ${svc}}, from: [{targetRef: {kind: Mesh}, default: {action: ${action}}}]}}\n`;
  return `type: MeshTrafficPermission\nmesh: default\nname: x\nspec:\n  targetRef:\n    kind: MeshService\n    name: ${svc}\n  from:\n    - targetRef:\n        kind: Mesh\n      default:\n        action: ${action}\n`;
}
/** The same key, invalid: its action is not one Kuma knows. */
const broken = (style: "block" | "flow") => mtp("svc-x", "Maybe", style);

for (const style of ["block", "flow"] as const) {
  for (const incremental of [true, false]) {
    test(`dir source › ${style} YAML, ${incremental ? "read by documents" : "read whole"}: given a later file's x set aside for another service over an earlier file's x that allows this one, when the later x turns invalid, then the earlier x stays overridden`, async (t) => {
      // given a.yaml's x on backend (this dataplane) Allow and b.yaml's x on svc-x Deny: b.yaml wins by name, and
      // its x does not select this dataplane, so no x is in force here
      const dir = mkdtempSync(join(tmpdir(), "dir-rejected-dropped-"));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      const applied: Policy[][] = [];
      const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p), selectFor: () => DATAPLANE, incremental, rescanIntervalMs: 0, watchedRescanIntervalMs: 0, workerMinBytes: Infinity });
      writeFileSync(join(dir, "a.yaml"), mtp("backend", "Allow", style));
      writeFileSync(join(dir, "b.yaml"), mtp("svc-x", "Deny", style));
      await source.scan();
      t.deepEqual(applied.at(-1)?.map((p) => p.name), [], "no x selects this dataplane");
      // when b.yaml's x is replaced by an invalid version
      writeFileSync(join(dir, "b.yaml"), broken(style));
      const report = await source.scan();
      // then it is rejected, its last good version (set aside) still wins, and a.yaml's Allow never comes into force
      t.is(report.rejected.length, 1);
      t.like(report.rejected[0], { kind: "MeshTrafficPermission", name: "x" });
      t.false((applied.at(-1) ?? []).some((p) => p.name === "x"), `in force: ${JSON.stringify(applied.at(-1)?.map((p) => p.spec))}`);
    });
  }
}
