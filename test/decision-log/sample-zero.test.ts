// decision log at sample 0 › the README's rule: every local reply (a deny, a fault abort, a rate limit, a
// redirect) and every shadow deny is written whatever --decision-log-sample says; only plain allows (and
// delays) are sampled, so at 0 none of them is. Decisions come from a real policy engine.
import test from "ava";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { startDecisionLog } from "../../extproc/decision-log/recorder.js";
import { silentLogger } from "../../extproc/log.js";
import { MTLS_MESH, ORDERS_DATAPLANE, yamlEngine } from "../policy/yaml-engine.js";

const TD = "spiffe://default.z1.mesh.local";
const POLICIES = `
type: MeshTrafficPermission
mesh: default
name: mtp
spec:
  rules:
    - default:
        allow: [{spiffeID: {type: Prefix, value: "${TD}/ns/shop"}}]
        allowWithShadowDeny: [{spiffeID: {type: Prefix, value: "${TD}/ns/legacy"}}]
---
type: MeshFaultInjection
mesh: default
name: chaos
spec:
  rules:
    - matches: [{spiffeID: {type: Exact, value: "${TD}/ns/shop/sa/flaky"}}]
      default: {http: [{abort: {httpStatus: 500, percentage: 100}}]}
    - matches: [{spiffeID: {type: Exact, value: "${TD}/ns/shop/sa/slow"}}]
      default: {http: [{delay: {value: 5ms, percentage: 100}}]}
---
type: MeshRateLimit
mesh: default
name: limits
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - matches: [{spiffeID: {type: Exact, value: "${TD}/ns/shop/sa/batch"}}]
      default: {local: {http: {requestRate: {num: 1, interval: 10s}}}}
---
type: MeshHTTPRoute
mesh: default
name: moved
spec:
  targetRef: {kind: Mesh}
  to:
    - targetRef: {kind: MeshService, name: payments}
      rules:
        - matches: [{path: {type: PathPrefix, value: /old}}]
          default: {filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}}}]}
`;

test("decision log › at sample 0, every local reply and shadow deny is written, and no plain allow or delay", async (t) => {
  // given the decision log at sample 0 with a random source that would sample everything it is asked about
  const dir = mkdtempSync(join(tmpdir(), "meshext-dlog-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "decisions.log");
  const { config } = loadSidecarConfig(["--decision-log", file, "--decision-log-sample", "0"], {});
  t.is(config.decisionLogSample, 0);
  const recorder = (await startDecisionLog(config, new Registry(), silentLogger(), () => 0))!;
  const e = yamlEngine([MTLS_MESH, ORDERS_DATAPLANE, POLICIES].join("\n---\n"));
  // when requests are decided and recorded: allowed, delayed, shadow-denied, denied, aborted, limited, redirected
  const inbound = (sa: string, path: string) => ({ inbound: "http", path, client: { spiffeID: `${TD}/ns/${sa}` } });
  const requests: Array<{ path: string; direction?: "inbound" | "outbound"; [k: string]: unknown }> = [
    inbound("shop/sa/web", "/allowed"),
    inbound("shop/sa/slow", "/delayed"),
    inbound("legacy/sa/old", "/shadow"),
    inbound("other/sa/x", "/denied"),
    inbound("shop/sa/flaky", "/aborted"),
    inbound("shop/sa/batch", "/first-batch"),
    inbound("shop/sa/batch", "/limited"),
    { direction: "outbound" as const, method: "GET", path: "/old/x", authority: "payments:80" },
  ];
  for (const r of requests) {
    const d = e.ask(r);
    recorder.record({ direction: r.direction ?? "inbound", method: "GET", path: r.path, authority: "orders", scheme: "http", headers: new Map(), peerUriSans: [] }, d, 0.1);
  }
  await recorder.close();
  // then exactly the local replies and the shadow deny are in the file, each with its outcome and status
  const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { path: string; outcome: string; status?: number });
  t.deepEqual(lines.map((l) => [l.path, l.outcome, l.status]), [
    ["/shadow", "shadow-deny", undefined],
    ["/denied", "deny", 403],
    ["/aborted", "abort", 500],
    ["/limited", "rate-limit", 429],
    ["/old/x", "allow", 302],
  ]);
});
