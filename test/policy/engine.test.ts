// engine › the demo policy set decides as documented; replace swaps atomically; decide never throws.
import test from "ava";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromTags, dataplaneFromText } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { seededRandom } from "../../extproc/policy/decide/random.js";
import type { Policy } from "../../extproc/policy/model/types.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

function demo(): { engine: PolicyEngine; policies: Policy[] } {
  const dp = dataplaneFromText(readFileSync(join(ROOT, "envoy/dataplane.yaml"), "utf8")).dataplane!;
  const dir = join(ROOT, "envoy/policies");
  const policies = readdirSync(dir).filter((f) => f.endsWith(".yaml")).flatMap((f) => parsePolicyText(readFileSync(join(dir, f), "utf8"), f).policies);
  let now = 0;
  const engine = new PolicyEngine({ dataplane: dp, random: seededRandom(3), nowMs: () => (now += 1) });
  engine.replace(policies);
  return { engine, policies };
}

function facts(over: Partial<RequestFacts> & { xfcc?: string } = {}): RequestFacts {
  const headers = new Map<string, string>();
  if (over.xfcc) headers.set("x-forwarded-client-cert", over.xfcc);
  return { direction: "inbound", method: "GET", path: "/", authority: "backend:8080", scheme: "http", headers, peerUriSans: [], ...over };
}

test("engine › demo set: all five sample policies load (the four for backend and the 2.14 one for the up demo dataplane)", (t) => {
  t.is(demo().policies.length, 5);
});

test("engine › demo set: a client other than web is denied with 403", (t) => {
  const d = demo().engine.decide(facts({ xfcc: "URI=spiffe://default/orders" }));
  t.is(d.type, "respond");
  t.is(d.type === "respond" ? d.status : 0, 403);
  t.is(d.explain.policy, "backend-allow-web");
});

test("engine › demo set: web passes mostly, sometimes aborted or delayed, then rate limited", (t) => {
  // given the demo set; when web sends 60 requests within one second; then some pass and the rest hit 429
  const { engine } = demo();
  const actions = Array.from({ length: 60 }, () => engine.decide(facts({ xfcc: "URI=spiffe://default/web" })).explain.action);
  t.true(actions.filter((a) => a === "allow").length >= 40);
  t.true(actions.includes("rate-limit"));
});

test("engine › demo set: outbound to payments gets header edits and a response phase", (t) => {
  const d = demo().engine.decide(facts({ direction: "outbound", authority: "payments.mesh:80", path: "/api/pay" }));
  t.is(d.type, "continue");
  if (d.type !== "continue") return;
  t.deepEqual(d.requestHeaders?.set, [["x-caller", "backend"]]);
  t.deepEqual(d.responseHeaders?.set, [["cache-control", "no-store"]]);
});

test("engine › replace swaps the whole set and bumps the version", (t) => {
  const { engine } = demo();
  const before = engine.current()!.version;
  const r = engine.replace([]);
  t.true(r.ok);
  t.is(r.version, before + 1);
  t.is(engine.decide(facts({ xfcc: "URI=spiffe://default/orders" })).type, "continue");
});

test("engine › decide never throws on odd facts", (t) => {
  const { engine } = demo();
  const odd: RequestFacts[] = [
    facts({ authority: "", path: "" }),
    facts({ direction: "outbound", authority: "[::1]:80", path: "?" }),
    facts({ headers: new Map([["x-forwarded-client-cert", '"""";;;,,,URI=']]) }),
    facts({ peerUriSans: ["kuma://", "spiffe://default/", "%E0%A4%A"] }),
  ];
  for (const f of odd) t.notThrows(() => engine.decide(f));
});

test("engine › dataplane from --dataplane-tags needs kuma.io/service", (t) => {
  t.deepEqual(dataplaneFromTags("default", "version=v1").violations.map((v) => v.field), ["dataplane-tags"]);
  t.deepEqual(dataplaneFromTags("default", "kuma.io/service=backend,version=v1").dataplane?.inbounds[0]?.tags, { "kuma.io/service": "backend", version: "v1" });
});

