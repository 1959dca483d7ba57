// MeshHTTPRoute header edits Envoy would drop under envoy.yaml's ext_proc mutation_rules are reported, not
// pretended: listed when the policy set loads (the sidecar warns), named in the /explain reason, and counted
// per request in meshext_header_edits_dropped_total.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { explainHandler } from "../../extproc/policy/views/explain-route.js";
import type { ExplainReport } from "../../extproc/policy/views/explain.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { SHIPPED_MUTATION_RULES } from "../../extproc/envoy-mutation-rules.js";
import { spawnMeshext } from "../drain/meshext-process.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";

// Envoy: ext_proc drops edits to :scheme / x-envoy-* under these rules and counts them in rejected_header_mutations.
const ROUTE = `
type: MeshHTTPRoute
name: to-payments
spec:
  targetRef: {kind: MeshService, name: backend}
  to:
    - targetRef: {kind: MeshService, name: payments}
      rules:
        - matches: [{path: {type: PathPrefix, value: /}}]
          default:
            filters:
              - type: RequestHeaderModifier
                requestHeaderModifier:
                  set: [{name: x-caller, value: backend}, {name: x-envoy-upstream-rq-timeout-ms, value: "50"}, {name: host, value: payments.internal}]
                  remove: [":scheme"]
              - type: ResponseHeaderModifier
                responseHeaderModifier:
                  set: [{name: cache-control, value: no-store}]
`;

const engine = () => {
  const e = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend").dataplane!, nowMs: () => 0 });
  return { e, result: e.replace(parsePolicyText(ROUTE).policies) };
};

test("route drops › loading the policy set lists exactly the edits Envoy would drop", (t) => {
  const { result } = engine();
  t.true(result.ok);
  t.deepEqual(result.droppedEdits, [
    { policy: "to-payments", rule: "to[0].rules[0]", phase: "request", header: "x-envoy-upstream-rq-timeout-ms", op: "set", reason: "envoy-header" },
    { policy: "to-payments", rule: "to[0].rules[0]", phase: "request", header: ":scheme", op: "remove", reason: "never-removable" },
  ]);
});

test("route drops › the sidecar process warns about each dropped edit when the policy set loads", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-route-warn-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "route.yaml"), `mesh: default\n${ROUTE.trim()}\n`);
  const sidecar = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--policies", dir, "--dataplane-tags", "kuma.io/service=backend"]);
  t.teardown(() => sidecar.child.kill("SIGKILL"));
  const warning = await sidecar.waitForLine((l) => String(l.msg).startsWith("MeshHTTPRoute header edit that Envoy drops") && l.header === ":scheme", 30_000);
  t.like(warning, { level: 40 /* pino warn */, policy: "to-payments", rule: "to[0].rules[0]", phase: "request", op: "remove", reason: "never-removable" });
  const other = await sidecar.waitForLine((l) => String(l.msg).startsWith("MeshHTTPRoute header edit") && l.header === "x-envoy-upstream-rq-timeout-ms", 5_000);
  t.is(other.reason, "envoy-header");
  t.false(sidecar.lines.some((l) => String(l.msg).startsWith("MeshHTTPRoute header edit") && ["x-caller", "host", "cache-control"].includes(String(l.header))));
});

test("route drops › /explain names the dropped edits in the decision's reason", (t) => {
  const { e } = engine();
  const r = explainHandler(e)(JSON.stringify({ direction: "outbound", authority: "payments", path: "/api" }));
  t.is(r.status, 200);
  const reason = (r.body as ExplainReport).decision.explain.reason;
  t.regex(reason, /Envoy drops \(ext_proc mutation_rules\): request set x-envoy-upstream-rq-timeout-ms \(envoy-header\), remove :scheme \(never-removable\)/);
  t.notRegex(reason, /x-caller|host \(|cache-control/, "edits Envoy applies are not listed");
});

test("route drops › the sidecar counts each dropped edit it sends, and Envoy's rules drop the same ones", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-route-drops-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "route.yaml"), `mesh: default\n${ROUTE.trim()}\n`);
  const h = await startTestSidecar(["--policies", dir, "--dataplane-tags", "kuma.io/service=backend"]);
  t.teardown(() => h.stop());
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { mutationRules: SHIPPED_MUTATION_RULES, initialMetadata: { "x-meshext-direction": "outbound" } });
  t.teardown(() => envoy.close());
  const deadline = Date.now() + 10_000;
  let out = await envoy.request({ authority: "payments", path: "/api" });
  // (the directory source loads asynchronously: 503 until the first policy set is in force)
  while (!out.upstreamRequest?.headers.some(([k]) => k === "x-caller") && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    out = await envoy.request({ authority: "payments", path: "/api" });
  }
  const sent = out.upstreamRequest?.headers ?? [];
  t.true(sent.some(([k, v]) => k === "x-caller" && v === "backend"), JSON.stringify(sent));
  t.true(sent.some(([k, v]) => k === ":authority" && v === "payments.internal") || sent.some(([k, v]) => k === "host" && v === "payments.internal"), "host is allowed by the shipped rules");
  t.false(sent.some(([k]) => k === "x-envoy-upstream-rq-timeout-ms"));
  const metrics = await (await fetch(`${h.adminUrl}/metrics`)).text();
  t.regex(metrics, /meshext_header_edits_dropped_total\{phase="request",reason="envoy-header"\} [1-9]/);
  t.regex(metrics, /meshext_header_edits_dropped_total\{phase="request",reason="never-removable"\} [1-9]/);
  t.true(envoy.stats.rejected_header_mutations >= 2);
});
