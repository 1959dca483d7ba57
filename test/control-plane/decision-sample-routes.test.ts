// postDecisionSamples in process: which pushes are held or refused (404, 413, 400 with every violation), what each answer counts, and which record fields are held.
import test from "ava";
import { postDecisionSamples } from "../../extproc/control-plane/decision-sample-routes.js";
import { DecisionSamples } from "../../extproc/control-plane/decision-samples.js";
import { ApiError, badRequest, payloadTooLarge } from "../../extproc/control-plane/problems.js";
import type { ApiReply, RouteContext } from "../../extproc/control-plane/route-context.js";

/** A decision record as the sidecar writes it for backend-1 in mesh default. */
function record(id: string): Record<string, unknown> {
  return {
    time: "2026-12-02T10:00:00.000Z",
    requestId: id,
    dataplane: "backend-1",
    mesh: "default",
    direction: "inbound",
    method: "GET",
    path: `/orders/${id}`,
    authority: "backend",
    outcome: "allow",
    kind: "MeshTrafficPermission",
  };
}

/** The route with a store holding only Dataplane default/backend-1, and a fresh sample store with rings of `perDataplane`. */
function setup(perDataplane = 5) {
  const samples = new DecisionSamples({ perDataplane, maxBytes: 1 << 20 });
  const store = { get: (kind: string, mesh: string, name: string) => (kind === "Dataplane" && mesh === "default" && name === "backend-1" ? { name } : undefined) };
  const ctx = { store, decisionSamples: samples } as unknown as RouteContext;
  const push = async (body: unknown, { mesh = "default", name = "backend-1" } = {}): Promise<ApiReply | ApiError> => {
    const req = {
      method: "POST",
      url: new URL(`http://cp/meshes/${mesh}/dataplanes/${name}/_decision-samples`),
      headers: {},
      body: () => (body instanceof Error ? Promise.reject(body) : Promise.resolve(Buffer.isBuffer(body) ? body : Buffer.from(typeof body === "string" ? body : JSON.stringify(body)))),
      abandoned: new Promise<void>(() => {}),
    };
    try {
      return await postDecisionSamples(ctx, req, mesh, name);
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
  };
  const counts = () => ({ pushes: Object.fromEntries(samples.pushes), dropped: Object.fromEntries(samples.dropped) });
  return { samples, push, counts };
}

const pushes = (p: Partial<Record<string, number>>) => ({ accepted: 0, malformed: 0, too_large: 0, unknown_dataplane: 0, ...p });
const dropped = (p: Partial<Record<string, number>>) => ({ ring_full: 0, memory_limit: 0, dataplane_removed: 0, refused: 0, ...p });

/** What JSON.parse says about `text`. */
function parseError(text: string): string {
  try {
    JSON.parse(text);
    return "";
  } catch (e) {
    return (e as Error).message;
  }
}

function refusal(t: { true(v: boolean, m?: string): void }, r: ApiReply | ApiError): ApiError {
  t.true(r instanceof ApiError, `expected a refusal, got ${JSON.stringify(r)}`);
  return r as ApiError;
}

test("decision-sample route › given an unregistered dataplane, when it pushes, then 404 naming it and counted unknown_dataplane", async (t) => {
  const { push, counts, samples } = setup();
  const err = refusal(t, await push({ records: [record("r0")] }, { name: "ghost-1" }));
  t.is(err.status, 404);
  t.is(err.title, "Could not retrieve Dataplane");
  t.is(err.detail, "Dataplane default/ghost-1 is not registered: samples are kept only for registered dataplanes");
  t.deepEqual(counts(), { pushes: pushes({ unknown_dataplane: 1 }), dropped: dropped({}) });
  t.is(samples.held("default", "ghost-1"), 0);
});

test("decision-sample route › given a body over --max-body-bytes, when pushed, then the 413 passes through and is counted too_large", async (t) => {
  const { push, counts } = setup();
  const err = refusal(t, await push(payloadTooLarge(4096)));
  t.is(err.status, 413);
  t.is(err.detail, "request body is larger than 4096 bytes");
  t.deepEqual(counts(), { pushes: pushes({ too_large: 1 }), dropped: dropped({}) });
});

test("decision-sample route › given a body read that fails otherwise, when pushed, then that error passes through and no push is counted", async (t) => {
  const { push, counts } = setup();
  const other = refusal(t, await push(badRequest("something else")));
  t.is(other.status, 400);
  await t.throwsAsync(push(new Error("socket hang up")), { message: "socket hang up" });
  t.deepEqual(counts(), { pushes: pushes({}), dropped: dropped({}) });
});

test("decision-sample route › given bodies that are not JSON or not valid UTF-8, when pushed, then 400 saying so and counted malformed", async (t) => {
  const { push, counts } = setup();
  const notJson = refusal(t, await push("{not json"));
  t.is(notJson.status, 400);
  t.regex(notJson.detail, /^request body is not JSON: .+/);
  t.is(notJson.detail, `request body is not JSON: ${parseError("{not json")}`);
  const badUtf8 = refusal(t, await push(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])));
  t.is(badUtf8.status, 400);
  t.is(badUtf8.detail, "request body is not valid UTF-8");
  t.deepEqual(counts(), { pushes: pushes({ malformed: 2 }), dropped: dropped({}) });
});

test("decision-sample route › given JSON that is no object (array, null, number, string), when pushed, then 400 on field '' asking for {records: [...]}", async (t) => {
  const { push, counts } = setup();
  for (const body of ["[1, 2]", "null", "42", '"records"']) {
    const err = refusal(t, await push(body));
    t.is(err.status, 400, body);
    t.is(err.detail, "invalid push", body);
    t.deepEqual(err.violations, [{ field: "", message: "must be an object {records: [...]}" }], body);
  }
  t.deepEqual(counts(), { pushes: pushes({ malformed: 4 }), dropped: dropped({}) });
});

test("decision-sample route › given an object whose records is missing or no array, when pushed, then 400 on field records", async (t) => {
  const { push, counts } = setup();
  for (const body of ["{}", '{"records": {"0": {}}}', '{"records": "r0"}']) {
    const err = refusal(t, await push(body));
    t.is(err.status, 400, body);
    t.is(err.detail, "invalid push", body);
    t.deepEqual(err.violations, [{ field: "records", message: "must be an array of decision-log records" }], body);
  }
  t.deepEqual(counts(), { pushes: pushes({ malformed: 3 }), dropped: dropped({}) });
});

test("decision-sample route › given rings of 3, when a push holds 4 records, then 413 naming both counts and the 4 counted refused; 3 are taken", async (t) => {
  const { push, counts, samples } = setup(3);
  const err = refusal(t, await push({ records: ["r0", "r1", "r2", "r3"].map(record) }));
  t.is(err.status, 413);
  t.is(err.title, "Payload Too Large");
  t.is(err.detail, "4 records in one push; at most 3 (--decision-samples-per-dataplane)");
  t.deepEqual(counts(), { pushes: pushes({ too_large: 1 }), dropped: dropped({ refused: 4 }) });
  t.is(samples.held("default", "backend-1"), 0);
  t.deepEqual(await push({ records: ["r0", "r1", "r2"].map(record) }), { status: 200, body: { accepted: 3, held: 3 } });
});

test("decision-sample route › given bad records among good, when pushed, then 400 listing each by index and none of them kept", async (t) => {
  const { push, counts, samples } = setup(10);
  const records = [record("r0"), { just: "an object" }, { ...record("r2"), dataplane: "backend-9" }, "text", { ...record("r4"), mesh: "other" }, { ...record("r5"), dataplane: 7, mesh: null }];
  const err = refusal(t, await push({ records }));
  t.is(err.status, 400);
  t.is(err.detail, "5 invalid record(s); none of the 6 kept");
  t.deepEqual(err.violations, [
    { field: "records[1]", message: "not a decision record (direction, method, path, authority, outcome, kind)" },
    { field: "records[2].dataplane", message: 'must be "backend-1", the dataplane of the URL' },
    { field: "records[3]", message: "not a JSON object" },
    { field: "records[4].mesh", message: 'must be "default", the mesh of the URL' },
    { field: "records[5].dataplane", message: 'must be "backend-1", the dataplane of the URL' },
    { field: "records[5].mesh", message: 'must be "default", the mesh of the URL' },
  ]);
  t.deepEqual(counts(), { pushes: pushes({ malformed: 1 }), dropped: dropped({ refused: 6 }) });
  t.deepEqual(samples.lines("default", "backend-1"), []);
});

test("decision-sample route › given good pushes, when taken, then the answer counts accepted and held, and each is counted accepted", async (t) => {
  const { push, counts, samples } = setup();
  t.deepEqual(await push({ records: [record("r0"), { ...record("r1"), dataplane: undefined, mesh: undefined }] }), { status: 200, body: { accepted: 2, held: 2 } });
  t.deepEqual(await push({ records: [] }), { status: 200, body: { accepted: 0, held: 2 } });
  t.deepEqual(await push({ records: [record("r2")] }), { status: 200, body: { accepted: 1, held: 3 } });
  t.deepEqual(counts(), { pushes: pushes({ accepted: 3 }), dropped: dropped({}) });
  t.deepEqual(samples.lines("default", "backend-1").map((l) => JSON.parse(l).requestId), ["r0", "r1", "r2"]);
});

test("decision-sample route › given a record with every decision-log field, when held, then exactly those of the right type are kept, with the URL's dataplane and mesh", async (t) => {
  const { push, samples } = setup();
  const full = {
    time: "2026-12-02T10:00:00.000Z", requestId: "r0", inbound: "8080", direction: "inbound", method: "POST", path: "/orders", authority: "backend:8080",
    outcome: "delay", kind: "MeshFaultInjection", policy: "slow", rule: "from[0]", reason: "fault", status: 200, delayMs: 250, latencyMs: 251.5,
    client: { tags: "kuma.io/service=web", source: "x-kuma-tags", spiffe: "spiffe://default/web", sni: "backend", extra: "dropped", port: 1 },
    matched: ["slow", 3, "fast", null],
    headers: { "x-user": "alice", "x-n": 5, "x-list": ["a"] },
    unknown: "not a decision-log field",
  };
  t.is((await push({ records: [full] })).status, 200);
  const [line] = samples.lines("default", "backend-1");
  t.deepEqual(JSON.parse(line!), {
    time: "2026-12-02T10:00:00.000Z", requestId: "r0", dataplane: "backend-1", mesh: "default", inbound: "8080", direction: "inbound", method: "POST", path: "/orders",
    authority: "backend:8080", outcome: "delay", kind: "MeshFaultInjection", policy: "slow", rule: "from[0]", reason: "fault", status: 200, delayMs: 250, latencyMs: 251.5,
    client: { tags: "kuma.io/service=web", source: "x-kuma-tags", spiffe: "spiffe://default/web", sni: "backend" },
    matched: ["slow", "fast"],
    headers: { "x-user": "alice" },
  });
});

test("decision-sample route › given fields of the wrong type or shape, when held, then they are left out rather than kept as sent", async (t) => {
  const { push, samples } = setup();
  const odd = {
    ...record("r0"), time: 1733133600, requestId: 7, inbound: 8080, policy: ["p"], rule: null, reason: false, status: "200", delayMs: "250", latencyMs: null,
    client: ["kuma.io/service=web"], matched: "slow", headers: ["x-user: alice"],
  };
  t.is((await push({ records: [odd] })).status, 200);
  t.deepEqual(JSON.parse(samples.lines("default", "backend-1")[0]!), {
    dataplane: "backend-1", mesh: "default", direction: "inbound", method: "GET", path: "/orders/r0", authority: "backend", outcome: "allow", kind: "MeshTrafficPermission",
  });
  const nulls = { ...record("r1"), client: null, headers: null };
  t.is((await push({ records: [nulls] })).status, 200);
  t.deepEqual(Object.keys(JSON.parse(samples.lines("default", "backend-1")[1]!)).sort(), Object.keys(record("r1")).sort());
});
