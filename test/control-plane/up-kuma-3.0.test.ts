// examples/kuma-3.0/README.md (the README's 2.14 example rewritten for Kuma 3.0, a preview), run as written: a
// real `meshext up --kuma-version 3.0` child process seeded from examples/kuma-3.0/ with its tagless demo Dataplane,
// the README's explain calls (one allowed, two denied), the same XFCCs through the real ext_proc gRPC stream, its
// `_rules` (no fromRules/toRules), and the 2.14 way of naming the dataplane refused with its field path.
import test from "ava";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { bannerAddresses, checkShownDecisions, explainAt, explainCalls, pageBlocks, putDenyWeb, shownJson } from "./example-page.js";
import { call, eventually, startUp } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PAGE = readFileSync(join(ROOT, "examples/kuma-3.0/README.md"), "utf8");

const blocks = (lang: string) => pageBlocks(PAGE, lang);

test("up 3.0 › the 3.0 example: seeded YAML, explain with an XFCC, the ext_proc decision, _rules and a refused 2.14 ref agree with the page", async (t) => {
  // given: the page shows the seeded policy file verbatim, and its curl commands
  t.deepEqual(parseYaml(blocks("yaml")[0]!), parseYaml(readFileSync(join(ROOT, "examples/kuma-3.0/demo-app-permission.yaml"), "utf8")), "the page shows demo-app-permission.yaml");
  const sh = blocks("sh");
  const calls = explainCalls(sh[0]!);
  t.deepEqual(calls.map((c) => c.type), ["continue", "respond", "respond"], "one allowed and two denied requests");

  // when: `meshext up --kuma-version 3.0` runs
  const up = await startUp(t, ["--envoy", "off", "--kuma-version", "3.0"]);
  t.true(await eventually(() => up.banner().includes("Ctrl-C"), 15_000), up.banner());
  const { cpUrl, admin, grpc } = bannerAddresses(up.banner());
  t.regex(up.banner(), /Kuma 3\.0, a preview/, "the banner says the samples follow the 3.0 preview");
  t.regex(up.stdout(), /Kuma 3\.0 is a preview: meshext follows Kuma's unreleased main branch/, "the log marks 3.0 as a preview");
  t.is((await call(cpUrl, "GET", "/")).body.basedOnKuma, "3.0.0");
  t.is((await call(cpUrl, "GET", "/meshes/default/meshidentities/demo-app")).status, 200, "identity.yaml seeded");
  const metrics = await (await fetch(`${admin}/metrics`)).text();
  t.regex(metrics, /meshext_policy_kuma_version_info\{version="3\.0",from="flag"\} 1/);

  // then: each explain call of the page gives the page's decision (once the policies and the MeshIdentity are
  // loaded: the first deny), through /explain and the real ext_proc stream
  await checkShownDecisions(t, admin, grpc, calls, 1);
  const explain = explainAt(admin);

  // and: `_rules` answers what the page shows (Kuma 3.0's shape), and /explain carries the same view
  const rules = await call(cpUrl, "GET", /curl -s localhost:5681(\S+_rules)/.exec(sh[1]!)![1]!);
  t.is(rules.status, 200);
  t.deepEqual(rules.body, shownJson(sh[1]!));
  t.deepEqual((await explain(calls[0]!.body)).dataplaneRules, rules.body, "/explain's dataplaneRules is the _rules view");

  // and: the page's 2.14-style PUT (a targetRef by name) is refused with the field and the page's reason
  const yaml = /--data-binary \$'([^']+)'/.exec(sh[2]!)![1]!.replace(/\\n/g, "\n");
  const refused = await fetch(`${cpUrl}/meshes/default/meshtrafficpermissions/by-name`, { method: "PUT", headers: { "content-type": "application/yaml" }, body: yaml });
  t.is(refused.status, 400);
  const shownReason = /"reason": "([^"]+)"/.exec(sh[2]!)![1]!;
  t.deepEqual(((await refused.json()) as { invalid_parameters: unknown[] }).invalid_parameters, [{ field: "spec.targetRef.name", reason: shownReason }]);
  t.is((await call(cpUrl, "GET", "/meshes/default/meshtrafficpermissions/by-name")).status, 404, "nothing stored");

  // and: a 3.0 deny PUT (by labels) changes the next decision for web
  t.is(await putDenyWeb(cpUrl, { kind: "Dataplane", labels: { app: "demo-app" } }), 201);
  t.true(await eventually(async () => (await explain(calls[0]!.body)).decision.type === "respond"), "decision follows the PUT");
  up.kill("SIGINT");
  t.is(await up.exited, 0);
});
