// dryRunReply in process: the dataplanes a policy's dry run lists (resolving a MeshHTTPRoute targetRef against the mesh's policies), which stored policy the candidate replaces, and stored Dataplanes the engine cannot read.
import test from "ava";
import { DEFAULT_KUMA_VERSION } from "../../extproc/kuma-rest/kuma-version.js";
import { POLICY_TYPES, type Resource } from "../../extproc/kuma-rest/resources.js";
import { DecisionSamples } from "../../extproc/control-plane/decision-samples.js";
import { dryRunReply } from "../../extproc/control-plane/dry-run.js";
import type { RouteContext } from "../../extproc/control-plane/route-context.js";
import { dataplane } from "./helpers.js";

/** A route context over an in-memory store of `stored` (listed by name, as the real store lists them). */
function contextOver(stored: Array<Record<string, unknown>>): RouteContext {
  const all = stored.map((r) => ({ mesh: "default", ...r }) as Resource);
  const store = {
    get: (kind: string, mesh: string, name: string) => all.find((r) => r.type === kind && r.mesh === mesh && r.name === name),
    list: (kind: string, mesh: string) => all.filter((r) => r.type === kind && r.mesh === mesh).sort((a, b) => (a.name < b.name ? -1 : 1)),
    getGlobal: () => undefined,
  };
  return { kumaVersion: DEFAULT_KUMA_VERSION, store, decisionSamples: new DecisionSamples({ perDataplane: 10, maxBytes: 1 << 20 }) } as unknown as RouteContext;
}

/** The dry run of `resource` (a policy) over `stored`. */
function dryRun(stored: Array<Record<string, unknown>>, resource: Record<string, unknown>) {
  const type = POLICY_TYPES.find((t) => t.kind === resource.type)!;
  const reply = dryRunReply(contextOver(stored), { url: new URL(`http://cp/meshes/default/${type.plural}/${String(resource.name)}?dryRun=true`) }, type, { mesh: "default", ...resource } as Resource);
  return reply.body as { dataplanes: { total: number; items: Array<{ name: string }> }; whatIf: { dataplanes: Array<{ name: string; selectedBy: string[] }> } };
}

const ROUTE_ON_BACKEND = { type: "MeshHTTPRoute", name: "r", spec: { targetRef: { kind: "MeshService", name: "backend" }, to: [{ targetRef: { kind: "MeshService", name: "backend" }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }] }] } };
const limitOn = (name: string, targetRef: Record<string, unknown>) => ({ type: "MeshRateLimit", name, spec: { targetRef, to: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { disabled: true } } } }] } });
const permissionOn = (name: string, service: string) => ({ type: "MeshTrafficPermission", name, spec: { targetRef: { kind: "MeshService", name: service }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Deny" } }] } });
const DATAPLANES = [dataplane("backend-1", "backend"), dataplane("web-1", "web")];
const whatIfNames = (body: ReturnType<typeof dryRun>) => body.whatIf.dataplanes.map((d) => [d.name, d.selectedBy]);

test("dry run reply › given a stored MeshHTTPRoute, when a policy targeting it is dry-run, then the dataplanes the route selects are listed", (t) => {
  // Given route r on backend stored beside a backend and a web dataplane
  const stored = [ROUTE_ON_BACKEND, ...DATAPLANES];
  // When a rate limit whose targetRef is r is PUT as a dry run
  const body = dryRun(stored, limitOn("m", { kind: "MeshHTTPRoute", name: "r" }));
  // Then it selects backend-1, in the listing and in the what-if
  t.deepEqual(body.dataplanes, { total: 1, items: [{ type: "Dataplane", mesh: "default", name: "backend-1", labels: {} } as never] });
  t.deepEqual(whatIfNames(body), [["backend-1", ["candidate"]]]);
});

test("dry run reply › given a stored policy of another kind with the candidate's name, then the candidate replaces nothing", (t) => {
  // Given a MeshRateLimit p on backend stored
  const stored = [limitOn("p", { kind: "MeshSubset", tags: { "kuma.io/service": "backend" } }), ...DATAPLANES];
  // When a MeshTrafficPermission also named p, on web, is dry-run
  const body = dryRun(stored, permissionOn("p", "web"));
  // Then only what it selects is covered: the rate limit is not the version it replaces
  t.deepEqual(whatIfNames(body), [["web-1", ["candidate"]]]);
  // And a MeshRateLimit p on web does replace it: backend-1 is covered as the stored version's
  t.deepEqual(whatIfNames(dryRun(stored, limitOn("p", { kind: "MeshSubset", tags: { "kuma.io/service": "web" } }))), [["backend-1", ["stored"]], ["web-1", ["candidate"]]]);
});

test("dry run reply › given a stored Dataplane the engine cannot read (an unknown inbound state), then it is left out and the others are listed", (t) => {
  // Given a readable backend-1 and a backend-0 whose inbound state is no Kuma state
  const odd = dataplane("backend-0", "backend");
  const unreadable = { ...odd, networking: { ...odd.networking, inbound: [{ ...odd.networking.inbound[0]!, state: "Bogus" }] } };
  // When a deny on backend is dry-run
  const body = dryRun([unreadable, ...DATAPLANES], permissionOn("deny-backend", "backend"));
  // Then backend-1 alone is listed and covered
  t.deepEqual(body.dataplanes.items.map((d) => d.name), ["backend-1"]);
  t.deepEqual(whatIfNames(body), [["backend-1", ["candidate"]]]);
});
