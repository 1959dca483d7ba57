// The README's "A Kuma 2.14 policy, end to end" section, run as written: a real `meshext up` child process
// (embedded control plane seeded from envoy/policies/ + sidecar), the seeded 2.14 MeshTrafficPermission,
// `curl` the sidecar's /explain with an x-forwarded-client-cert, the same requests through the real ext_proc
// gRPC stream, and the control plane's `_rules` for the demo dataplane — compared with what the README shows.
import test from "ava";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { bannerAddresses, checkShownDecisions, explainAt, explainCalls, pageBlocks, putDenyWeb, shownJson } from "./example-page.js";
import { call, eventually, startUp } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const SECTION = README.slice(README.indexOf("### A Kuma 2.14 policy, end to end"), README.indexOf("Policy sources: `--policies DIR`"));

const blocks = (lang: string) => pageBlocks(SECTION, lang);

test("readme › the 2.14 example: seeded YAML, explain with an XFCC, the ext_proc decision and _rules agree with the README", async (t) => {
  // given: the README shows the seeded policy file verbatim, and its curl commands
  t.true(SECTION.length > 100, "README has the 2.14 section");
  const shownPolicy = parseYaml(blocks("yaml")[0]!);
  const seededFile = parseYaml(readFileSync(join(ROOT, "envoy/policies/demo-app-permission.yaml"), "utf8"));
  t.deepEqual(shownPolicy, seededFile, "the README shows envoy/policies/demo-app-permission.yaml");
  const sh = blocks("sh");
  const calls = explainCalls(sh[0]!);
  t.is(calls.length, 3);
  t.true(calls.every((c) => c.type !== ""), "each call shows its decision");

  // when: `meshext up` runs
  const up = await startUp(t);
  t.true(await eventually(() => up.banner().includes("Ctrl-C"), 15_000), up.banner());
  const { cpUrl, admin, grpc } = bannerAddresses(up.banner());
  t.is((await call(cpUrl, "GET", "/")).body.basedOnKuma, "2.14.3", "the control plane says which Kuma it emulates");
  const metrics = await (await fetch(`${admin}/metrics`)).text();
  t.regex(metrics, /meshext_policy_kuma_version_info\{version="2\.14\.3",from="control-plane"\} 1/, "the sidecar detected 2.14.3 (patch level kept) from the control plane");
  t.truthy((await call(cpUrl, "GET", "/meshes/default")).body.mtls?.enabledBackend, "mesh.yaml seeded: mTLS on");

  // then: each README explain call gives the README's decision, through /explain and the real ext_proc stream
  await checkShownDecisions(t, admin, grpc, calls, 0);
  const explain = explainAt(admin);

  // and: `_rules` answers what the README shows, and /explain carries the same rule view
  const rulesCall = /curl -s localhost:5681(\S+_rules)/.exec(sh[1]!)![1]!;
  const rules = await call(cpUrl, "GET", rulesCall);
  t.is(rules.status, 200);
  t.deepEqual(rules.body, shownJson(sh[1]!));
  t.deepEqual((await explain(calls[0]!.body)).dataplaneRules, rules.body, "/explain's dataplaneRules is the _rules view");

  // and: a 2.14 deny PUT through the API (the banner's example) changes the next decision
  t.is(await putDenyWeb(cpUrl, { kind: "Dataplane", name: "demo-app-1" }), 201);
  t.true(await eventually(async () => (await explain(calls[0]!.body)).decision.type === "respond"), "decision follows the PUT");
  up.kill("SIGINT");
  t.is(await up.exited, 0);
});
