// examples/kuma-3.0/README.md (the README's 2.14 example rewritten for Kuma 3.0, a preview), run as written: a
// real `meshext up --kuma-version 3.0` child process seeded from examples/kuma-3.0/ with its tagless demo Dataplane,
// the README's explain calls (one allowed, two denied), the same XFCCs through the real ext_proc gRPC stream, its
// `_rules` (no fromRules/toRules), and the 2.14 way of naming the dataplane refused with its field path.
import test from "ava";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { call, eventually, startUp } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PAGE = readFileSync(join(ROOT, "examples/kuma-3.0/README.md"), "utf8");

/** The page's code blocks of one language, in order. */
const blocks = (lang: string) => [...PAGE.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);

test("up 3.0 › the 3.0 example: seeded YAML, explain with an XFCC, the ext_proc decision, _rules and a refused 2.14 ref agree with the page", async (t) => {
  // given: the page shows the seeded policy file verbatim, and its curl commands
  t.deepEqual(parseYaml(blocks("yaml")[0]!), parseYaml(readFileSync(join(ROOT, "examples/kuma-3.0/demo-app-permission.yaml"), "utf8")), "the page shows demo-app-permission.yaml");
  const sh = blocks("sh");
  const explainBodies = [...sh[0]!.matchAll(/-d '([^']+)'/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
  const expected = [...sh[0]!.matchAll(/# (\{"decision".*)/g)].map((m) => /"type":"(\w+)"(?:,"status":(\d+))?/.exec(m[1]!)!);
  t.deepEqual(expected.map((e) => e[1]), ["continue", "respond", "respond"], "one allowed and two denied requests");

  // when: `meshext up --kuma-version 3.0` runs
  const up = await startUp(t, ["--envoy", "off", "--kuma-version", "3.0"]);
  const envoys: EnvoyExtProcClient[] = [];
  t.teardown(() => envoys.forEach((e) => e.close()));
  t.true(await eventually(() => up.banner().includes("Ctrl-C"), 15_000), up.banner());
  const cpUrl = /control plane \(Kuma REST API\)\s+(http:\/\/\S+)/.exec(up.banner())![1]!;
  const admin = /sidecar admin\s+(http:\/\/\S+)/.exec(up.banner())![1]!;
  const grpc = /sidecar ext_proc \(gRPC\)\s+(\S+)/.exec(up.banner())![1]!;
  t.regex(up.banner(), /Kuma 3\.0, a preview/, "the banner says the samples follow the 3.0 preview");
  t.regex(up.stdout(), /Kuma 3\.0 is a preview: meshext follows Kuma's unreleased main branch/, "the log marks 3.0 as a preview");
  t.is((await call(cpUrl, "GET", "/")).body.basedOnKuma, "3.0.0");
  t.is((await call(cpUrl, "GET", "/meshes/default/meshidentities/demo-app")).status, 200, "identity.yaml seeded");
  const metrics = await (await fetch(`${admin}/metrics`)).text();
  t.regex(metrics, /meshext_policy_kuma_version_info\{version="3\.0",from="flag"\} 1/);

  // then: each explain call of the page gives the page's decision
  const explain = async (body: unknown) => {
    const res = await fetch(`${admin}/explain`, { method: "POST", body: JSON.stringify(body) });
    return (await res.json()) as { decision: { type: string; status?: number }; dataplaneRules: unknown };
  };
  t.true(await eventually(async () => (await explain(explainBodies[1])).decision.type === "respond", 15_000), "policies and the MeshIdentity loaded");
  for (const [i, body] of explainBodies.entries()) {
    const got = await explain(body);
    t.is(got.decision.type, expected[i]![1], JSON.stringify(body));
    if (expected[i]![2]) t.is(got.decision.status, Number(expected[i]![2]));
  }

  // and: the same XFCCs through the real ext_proc stream decide the same way
  const envoy = new EnvoyExtProcClient(grpc, { messageTimeoutMs: 3000 });
  envoys.push(envoy);
  for (const [i, body] of explainBodies.entries()) {
    const xfcc = (body.headers as Record<string, string> | undefined)?.["x-forwarded-client-cert"];
    if (!xfcc) continue;
    const outcome = await envoy.request({ path: "/", headers: [["x-forwarded-client-cert", xfcc]] });
    t.is(outcome.status, expected[i]![1] === "continue" ? 200 : Number(expected[i]![2]), xfcc);
  }

  // and: `_rules` answers what the page shows (Kuma 3.0's shape), and /explain carries the same view
  const rules = await call(cpUrl, "GET", /curl -s localhost:5681(\S+_rules)/.exec(sh[1]!)![1]!);
  t.is(rules.status, 200);
  t.deepEqual(rules.body, JSON.parse(sh[1]!.split("\n").filter((l) => l.startsWith("# ")).map((l) => l.slice(2)).join("\n")));
  t.deepEqual((await explain(explainBodies[0])).dataplaneRules, rules.body, "/explain's dataplaneRules is the _rules view");

  // and: the page's 2.14-style PUT (a targetRef by name) is refused with the field and the page's reason
  const yaml = /--data-binary \$'([^']+)'/.exec(sh[2]!)![1]!.replace(/\\n/g, "\n");
  const refused = await fetch(`${cpUrl}/meshes/default/meshtrafficpermissions/by-name`, { method: "PUT", headers: { "content-type": "application/yaml" }, body: yaml });
  t.is(refused.status, 400);
  const shownReason = /"reason": "([^"]+)"/.exec(sh[2]!)![1]!;
  t.deepEqual(((await refused.json()) as { invalid_parameters: unknown[] }).invalid_parameters, [{ field: "spec.targetRef.name", reason: shownReason }]);
  t.is((await call(cpUrl, "GET", "/meshes/default/meshtrafficpermissions/by-name")).status, 404, "nothing stored");

  // and: a 3.0 deny PUT (by labels) changes the next decision for web
  const denyWeb = {
    type: "MeshTrafficPermission",
    mesh: "default",
    name: "deny-web",
    spec: { targetRef: { kind: "Dataplane", labels: { app: "demo-app" } }, rules: [{ default: { deny: [{ spiffeID: { type: "Exact", value: "spiffe://default.z1.mesh.local/ns/shop/sa/web" } }] } }] },
  };
  t.is((await call(cpUrl, "PUT", "/meshes/default/meshtrafficpermissions/deny-web", denyWeb)).status, 201);
  t.true(await eventually(async () => (await explain(explainBodies[0])).decision.type === "respond"), "decision follows the PUT");
  up.kill("SIGINT");
  t.is(await up.exited, 0);
});
