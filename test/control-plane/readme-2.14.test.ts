// The README's "A Kuma 2.14 policy, end to end" section, run as written: a real `meshext up` child process
// (embedded control plane seeded from envoy/policies/ + sidecar), the seeded 2.14 MeshTrafficPermission,
// `curl` the sidecar's /explain with an x-forwarded-client-cert, the same requests through the real ext_proc
// gRPC stream, and the control plane's `_rules` for the demo dataplane — compared with what the README shows.
import test from "ava";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { call, eventually, startUp } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const SECTION = README.slice(README.indexOf("### A Kuma 2.14 policy, end to end"), README.indexOf("Policy sources: `--policies DIR`"));

/** The README's code blocks of one language, in order. */
const blocks = (lang: string) => [...SECTION.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);

test("readme › the 2.14 example: seeded YAML, explain with an XFCC, the ext_proc decision and _rules agree with the README", async (t) => {
  // given: the README shows the seeded policy file verbatim, and its curl commands
  t.true(SECTION.length > 100, "README has the 2.14 section");
  const shownPolicy = parseYaml(blocks("yaml")[0]!);
  const seededFile = parseYaml(readFileSync(join(ROOT, "envoy/policies/demo-app-permission.yaml"), "utf8"));
  t.deepEqual(shownPolicy, seededFile, "the README shows envoy/policies/demo-app-permission.yaml");
  const sh = blocks("sh");
  const explainBodies = [...sh[0]!.matchAll(/-d '([^']+)'/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
  const expected = [...sh[0]!.matchAll(/# (\{"decision".*)/g)].map((m) => /"type":"(\w+)"(?:,"status":(\d+))?/.exec(m[1]!)!);
  t.is(explainBodies.length, 3);
  t.is(expected.length, 3);

  // when: `meshext up` runs
  const up = await startUp(t);
  const envoys: EnvoyExtProcClient[] = [];
  t.teardown(() => envoys.forEach((e) => e.close()));
  const banner = () => up.banner();
  t.true(await eventually(() => banner().includes("Ctrl-C"), 15_000), banner());
  const cpUrl = /control plane \(Kuma REST API\)\s+(http:\/\/\S+)/.exec(banner())![1]!;
  const admin = /sidecar admin\s+(http:\/\/\S+)/.exec(banner())![1]!;
  const grpc = /sidecar ext_proc \(gRPC\)\s+(\S+)/.exec(banner())![1]!;
  t.is((await call(cpUrl, "GET", "/")).body.basedOnKuma, "2.14.3", "the control plane says which Kuma it emulates");
  const metrics = await (await fetch(`${admin}/metrics`)).text();
  t.regex(metrics, /meshext_policy_kuma_version_info\{version="2\.14\.3",from="control-plane"\} 1/, "the sidecar detected 2.14.3 (patch level kept) from the control plane");
  t.truthy((await call(cpUrl, "GET", "/meshes/default")).body.mtls?.enabledBackend, "mesh.yaml seeded: mTLS on");

  // then: each README explain call gives the README's decision
  const explain = async (body: unknown) => {
    const res = await fetch(`${admin}/explain`, { method: "POST", body: JSON.stringify(body) });
    return (await res.json()) as { decision: { type: string; status?: number }; dataplaneRules: unknown };
  };
  t.true(await eventually(async () => (await explain(explainBodies[0])).decision.type === expected[0]![1]), "policies loaded");
  for (const [i, body] of explainBodies.entries()) {
    const got = await explain(body);
    t.is(got.decision.type, expected[i]![1], JSON.stringify(body));
    if (expected[i]![2]) t.is(got.decision.status, Number(expected[i]![2]));
  }

  // and: the same XFCCs through the real ext_proc stream decide the same way (Envoy itself is the only mock)
  const envoy = new EnvoyExtProcClient(grpc, { messageTimeoutMs: 3000 });
  envoys.push(envoy);
  for (const [i, body] of explainBodies.entries()) {
    const xfcc = (body.headers as Record<string, string> | undefined)?.["x-forwarded-client-cert"];
    if (!xfcc) continue;
    const outcome = await envoy.request({ path: "/", headers: [["x-forwarded-client-cert", xfcc]] });
    t.is(outcome.status, expected[i]![1] === "continue" ? 200 : Number(expected[i]![2]), xfcc);
  }

  // and: `_rules` answers what the README shows, and /explain carries the same rule view
  const rulesCall = /curl -s localhost:5681(\S+_rules)/.exec(sh[1]!)![1]!;
  const rules = await call(cpUrl, "GET", rulesCall);
  t.is(rules.status, 200);
  const shownRules = JSON.parse(sh[1]!.split("\n").filter((l) => l.startsWith("# ")).map((l) => l.slice(2)).join("\n"));
  t.deepEqual(rules.body, shownRules);
  t.deepEqual((await explain(explainBodies[0])).dataplaneRules, rules.body, "/explain's dataplaneRules is the _rules view");

  // and: a 2.14 deny PUT through the API (the banner's example) changes the next decision
  const denyWeb = {
    type: "MeshTrafficPermission",
    mesh: "default",
    name: "deny-web",
    spec: { targetRef: { kind: "Dataplane", name: "demo-app-1" }, rules: [{ default: { deny: [{ spiffeID: { type: "Exact", value: "spiffe://default.z1.mesh.local/ns/shop/sa/web" } }] } }] },
  };
  t.is((await call(cpUrl, "PUT", "/meshes/default/meshtrafficpermissions/deny-web", denyWeb)).status, 201);
  t.true(await eventually(async () => (await explain(explainBodies[0])).decision.type === "respond"), "decision follows the PUT");
  up.kill("SIGINT");
  t.is(await up.exited, 0);
});
