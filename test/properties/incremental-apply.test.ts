// incremental apply › a policy directory followed incrementally (only changed documents parsed, unchanged plans
// reused) decides, explains and rejects exactly as the same directory reloaded in full, over random edit sequences
// (documents added, edited, deleted, rejected, unparseable; files deleted), last good versions included.
import test from "ava";
import fc from "fast-check";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { stringify } from "yaml";
import type { RequestFacts } from "../../extproc/decision.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { seededRandom } from "../../extproc/policy/decide/random.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";
import { selectForDataplane } from "../../extproc/policy/selection/select.js";
import { explainHandler } from "../../extproc/policy/views/explain-route.js";
import { DirPolicySource } from "../../extproc/policy-source/dir-source.js";
import { budget } from "./budget.js";

const SERVICES = ["backend", "web", "other"];
const service = fc.constantFrom(...SERVICES);
const topRef = fc.oneof(fc.constant({ kind: "Mesh" }), service.map((name) => ({ kind: "MeshService", name })), fc.constant({ kind: "MeshSubset", tags: { version: "v1" } }));
const fromRef = fc.oneof(fc.constant({ kind: "Mesh" }), service.map((name) => ({ kind: "MeshService", name })));
const confOf: Record<string, fc.Arbitrary<object>> = {
  MeshTrafficPermission: fc.constantFrom("Allow", "Deny", "AllowWithShadowDeny").map((action) => ({ action })),
  MeshFaultInjection: fc.integer({ min: 0, max: 100 }).map((percentage) => ({ http: [{ abort: { httpStatus: 503, percentage } }] })),
  MeshRateLimit: fc.integer({ min: 1, max: 3 }).map((num) => ({ local: { http: { requestRate: { num, interval: "10s" } } } })),
};
const policy = fc.oneof(
  fc.tuple(fc.constantFrom("MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit"), topRef, fc.nat(5)).chain(([type, targetRef, n]) =>
    fc.array(fc.record({ targetRef: type === "MeshRateLimit" ? fc.constant({ kind: "Mesh" }) : fromRef, default: confOf[type]! }), { minLength: 1, maxLength: 2 }).map((from) => ({ type, name: `p-${n}`, mesh: "default", spec: { targetRef, from } })),
  ),
  fc.tuple(topRef, fc.constantFrom("route-0", "route-1"), service, fc.constantFrom("/a", "/b")).map(([targetRef, name, to, prefix]) => ({
    type: "MeshHTTPRoute", name, mesh: "default",
    spec: { targetRef, to: [{ targetRef: { kind: "MeshService", name: to }, rules: [{ matches: [{ path: { type: "PathPrefix", value: prefix } }], default: { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-route", value: `${name}${prefix}` }] } }] } }] }] },
  })),
);
/** A document's text: valid, rejected (identified or not), outside the plain subset, or not YAML at all. */
const documentText = fc.oneof(
  { arbitrary: policy.map((p) => stringify(p)), weight: 6 },
  fc.nat(5).map((n) => stringify({ type: "MeshTrafficPermission", name: `p-${n}`, mesh: "default", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Maybe" } }] } })),
  fc.constant(stringify({ type: "MeshTrafficPermission", mesh: "default", spec: {} })),
  policy.map((p) => `# a comment: read by the yaml library\n${stringify(p)}`),
  fc.constant("type: [unclosed\n"),
);
const FILES = ["a.yaml", "b.yaml", "c.yaml"];
type Op = { file: number; doc: number; text?: string } | { file: number; doc: number; relabel: number } | { file: number; deleteFile: true };
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ file: fc.nat(2), doc: fc.nat(3), text: documentText }), weight: 6 },
  // an edit in place: the same policy (same key, same selection) with a new label
  { arbitrary: fc.record({ file: fc.nat(2), doc: fc.nat(3), relabel: fc.nat(9) }), weight: 4 },
  fc.record({ file: fc.nat(2), doc: fc.nat(3) }),
  fc.record({ file: fc.nat(2), deleteFile: fc.constant(true as const) }),
);

const dataplane: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [
  { name: "8080", port: 8080, tags: { "kuma.io/service": "backend", version: "v1" } },
  { name: "8081", port: 8081, tags: { "kuma.io/service": "web", version: "v2" } },
] };
const requests: RequestFacts[] = SERVICES.flatMap((svc) => [8080, 8081].map((port): RequestFacts => ({
  direction: "inbound", method: "GET", path: "/a", scheme: "http", headers: new Map(), authority: `localhost:${port}`, peerUriSans: [`spiffe://default/${svc}`],
}))).concat(SERVICES.flatMap((svc) => ["/a/x", "/b"].map((path): RequestFacts => ({ direction: "outbound", method: "GET", path, scheme: "http", headers: new Map(), authority: `${svc}:80`, peerUriSans: [] }))));

function follower(dir: string, incremental: boolean) {
  let now = 0;
  const engine = new PolicyEngine({ dataplane, random: seededRandom(3), nowMs: () => (now += 5), reusePlans: incremental });
  const registry = new Registry();
  const source = new DirPolicySource({
    dir, incremental, registry, selectFor: () => dataplane, rescanIntervalMs: 0, watchedRescanIntervalMs: 0, workerMinBytes: Infinity,
    watchDir: () => ({ on: () => undefined, close: () => undefined }),
    apply: (policies, _origin, resources, total) => {
      const selection = selectForDataplane(policies, engine.dataplane, engine.kumaVersion);
      engine.replace(selection.kept, resources, { kept: selection.kept.length, total: total ?? selection.total });
    },
  });
  const explain = explainHandler(engine, () => source.rejected);
  return { engine, source, explain, registry };
}

/** What a follower shows: its rejections, the policies in force, every request's decision and explanation. */
function observed(f: ReturnType<typeof follower>, dir: string): string {
  const decisions = requests.map((r) => { const { audit: _, ...d } = f.engine.decide(r); return d; });
  const explained = requests.map((r) => f.explain(JSON.stringify({ direction: r.direction, authority: r.authority, path: r.path, client: { uriSans: r.peerUriSans } })));
  const policies = f.engine.current()?.policies.map((p) => `${p.type}/${p.name}`) ?? [];
  return JSON.stringify({ rejected: f.source.rejected, policies, decisions, explained, version: f.engine.current()?.version }).replaceAll(dir, "DIR");
}

test("incremental apply › given random edit sequences, when followed incrementally and in full, then decisions, explanations and rejections are the same", async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), async (ops) => {
    const root = mkdtempSync(join(tmpdir(), "meshext-incr-"));
    const dirs = { incr: join(root, "incr"), full: join(root, "full") };
    mkdirSync(dirs.incr);
    mkdirSync(dirs.full);
    const files: Array<string[] | undefined> = FILES.map(() => []);
    const incr = follower(dirs.incr, true);
    const full = follower(dirs.full, false);
    try {
      for (const o of [{ file: 0, doc: 0, text: stringify({ type: "MeshTrafficPermission", name: "base", mesh: "default", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] } }) }, ...ops]) {
        if ("deleteFile" in o) files[o.file] = undefined;
        else if ("relabel" in o) {
          const docs = files[o.file];
          if (docs?.[o.doc] !== undefined) docs[o.doc] = `${docs[o.doc]!.replace(/labels:\n  edit: "\d"\n$/, "")}labels:\n  edit: "${o.relabel}"\n`;
        } else {
          const docs = (files[o.file] ??= []);
          if (o.text === undefined) docs.splice(o.doc, 1);
          else docs[Math.min(o.doc, docs.length)] = o.text;
        }
        for (const dir of [dirs.incr, dirs.full]) {
          FILES.forEach((name, i) => {
            if (files[i] === undefined) rmSync(join(dir, name), { force: true });
            else writeFileSync(join(dir, name), files[i]!.join("---\n"));
          });
        }
        await incr.source.scan();
        await full.source.scan();
        const a = observed(incr, dirs.incr);
        const b = observed(full, dirs.full);
        if (a !== b) {
          t.log(JSON.stringify(files, null, 1));
          t.deepEqual(JSON.parse(a), JSON.parse(b));
          return false;
        }
      }
      return true;
    } finally {
      await incr.source.stop();
      await full.source.stop();
      rmSync(root, { recursive: true, force: true });
    }
  }), budget(60, 20_000));
  t.pass();
});

/** Documents a follower has parsed so far (its meshext_policy_dir_documents_parsed_total). */
const parsedBy = async (f: ReturnType<typeof follower>) => (await f.registry.getSingleMetric("meshext_policy_dir_documents_parsed_total")!.get()).values[0]?.value ?? 0;

test("incremental apply › given two files of which one is edited, then the incremental follower parses fewer documents than the full one, which reads the whole edited file", async (t) => {
  // Given both followers over two files of two policies each, scanned once
  const root = mkdtempSync(join(tmpdir(), "meshext-incr-"));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const mtp = (name: string, action: string) => stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] } });
  const followers = [true, false].map((incremental) => {
    const dir = join(root, incremental ? "incr" : "full");
    mkdirSync(dir);
    writeFileSync(join(dir, "a.yaml"), [mtp("a-1", "Allow"), mtp("a-2", "Allow")].join("---\n"));
    writeFileSync(join(dir, "b.yaml"), [mtp("b-1", "Allow"), mtp("b-2", "Allow")].join("---\n"));
    return { dir, f: follower(dir, incremental) };
  });
  t.teardown(() => Promise.all(followers.map(({ f }) => f.source.stop())));
  for (const { f } of followers) await f.source.scan();
  const before = await Promise.all(followers.map(({ f }) => parsedBy(f)));
  // When one document of b.yaml changes and both scan again
  for (const { dir, f } of followers) {
    writeFileSync(join(dir, "b.yaml"), [mtp("b-1", "Allow"), mtp("b-2", "Deny")].join("---\n"));
    await f.source.scan();
  }
  const after = await Promise.all(followers.map(({ f }) => parsedBy(f)));
  // Then both show the same, the full follower parsed both documents of b.yaml again and the incremental one fewer
  t.is(observed(followers[0]!.f, followers[0]!.dir), observed(followers[1]!.f, followers[1]!.dir));
  t.is(after[1]! - before[1]!, 2);
  t.true(after[0]! - before[0]! < 2, `the incremental follower parsed ${after[0]! - before[0]!} documents`);
  t.true(after[0]! - before[0]! >= 1, "the edited document was parsed");
});
