// POST …/dataplanes/{name}/_decision-samples on the real `meshext control-plane` binary: malformed pushes get 400
// with every violation and change nothing, oversize ones 413, unknown dataplanes 404, writes need the token; the ring
// keeps each dataplane's newest records and one byte bound holds across dataplanes; the metrics count all of it.
import test from "ava";
import { call, dataplane, mtp } from "./helpers.js";
import { controlPlaneProcess, metric } from "./pushing-mesh.js";

/** A decision record as the sidecar writes it: `id` allowed from web on backend-1 (`pad`: a header that long). */
function record(id: string, pad = 0): Record<string, unknown> {
  return {
    time: "2026-12-02T10:00:00.000Z",
    requestId: id,
    dataplane: "backend-1",
    mesh: "default",
    direction: "inbound",
    method: "GET",
    path: `/orders/${id}`,
    authority: "backend",
    client: { tags: "kuma.io/service=web", source: "x-kuma-tags" },
    matched: [],
    outcome: "allow",
    kind: "MeshTrafficPermission",
    policy: "backend-allow-web",
    rule: "from[1]",
    reason: "recorded",
    latencyMs: 0.1,
    ...(pad ? { headers: { "x-pad": "p".repeat(pad) } } : {}),
  };
}
const push = (cp: string, name: string, records: unknown, headers: Record<string, string> = {}) => call(cp, "POST", `/meshes/default/dataplanes/${name}/_decision-samples`, records === undefined ? undefined : typeof records === "string" ? records : { records }, headers);
const register = async (cp: string, name: string, headers: Record<string, string> = {}) => (await call(cp, "PUT", `/meshes/default/dataplanes/${name}`, dataplane(name, "backend"), headers)).status;

/** The requestIds held for `name`, read through a dry run that denies everything (every held record then changes). */
async function held(cp: string, name: string): Promise<string[]> {
  const reply = await call(cp, "PUT", "/meshes/default/meshtrafficpermissions/deny-all?dryRun=true&examples=100", mtp("deny-all", "Deny"));
  const entry = reply.body.whatIf.dataplanes.find((d: { name: string }) => d.name === name);
  return (entry?.report?.examples ?? []).map((e: { requestId: string }) => e.requestId);
}

test("decision samples › malformed pushes are refused with every violation and change nothing; the control plane keeps serving", async (t) => {
  // Given a control plane with backend-1 registered
  const cp = await controlPlaneProcess(t);
  t.is(await register(cp, "backend-1"), 201);
  // When pushes that are not JSON, not an object, lack records, or hold bad records arrive
  const notJson = await push(cp, "backend-1", "{not json");
  const array = await push(cp, "backend-1", "[1, 2]");
  const noRecords = await push(cp, "backend-1", "{}");
  const badUtf8 = await call(cp, "POST", "/meshes/default/dataplanes/backend-1/_decision-samples", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
  const badRecords = await push(cp, "backend-1", [record("r0"), { just: "an object" }, { ...record("r2"), dataplane: "backend-9" }, "text", { ...record("r4"), mesh: "other" }]);
  // Then each is a 400 naming what is wrong, every bad record listed by index
  for (const r of [notJson, array, noRecords, badUtf8, badRecords]) t.is(r.status, 400, JSON.stringify(r.body));
  t.regex(notJson.body.detail, /not JSON/);
  t.deepEqual(noRecords.body.invalid_parameters, [{ field: "records", reason: "must be an array of decision-log records" }]);
  t.deepEqual(
    badRecords.body.invalid_parameters.map((p: { field: string }) => p.field),
    ["records[1]", "records[2].dataplane", "records[3]", "records[4].mesh"],
  );
  t.regex(badRecords.body.detail, /4 invalid record\(s\); none of the 5 kept/);
  // And nothing is held; the refusals are counted
  t.deepEqual(await held(cp, "backend-1"), []);
  t.is(await metric(cp, 'meshext_control_plane_decision_sample_pushes_total{result="malformed"}'), 5);
  t.is(await metric(cp, 'meshext_control_plane_decision_samples_dropped_total{reason="refused"}'), 5);
  t.is(await metric(cp, "meshext_control_plane_decision_samples"), 0);
  // And a good push afterwards is taken, a record without dataplane and mesh gets the URL's, and a field that is no
  // decision-log field (here nested 100 000 deep) is not kept
  const deep = `{"records":[${JSON.stringify(record("r2")).slice(0, -1)},"extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}]}`;
  const ok = await push(cp, "backend-1", [record("r0"), { ...record("r1"), dataplane: undefined, mesh: undefined }]);
  t.is(ok.status, 200);
  t.deepEqual(ok.body, { accepted: 2, held: 2 });
  t.deepEqual((await push(cp, "backend-1", deep)).body, { accepted: 1, held: 3 });
  t.deepEqual(await held(cp, "backend-1"), ["r0", "r1", "r2"]);
});

test("decision samples › over --max-body-bytes or the ring size is 413, an unregistered dataplane 404, and a set token is required", async (t) => {
  // Given a control plane with small limits and a token
  const cp = await controlPlaneProcess(t, ["--max-body-bytes", "4096", "--decision-samples-per-dataplane", "3", "--token", "s3cret"]);
  const auth = { authorization: "Bearer s3cret" };
  t.is(await register(cp, "backend-1", auth), 201);
  // When a body passes 4096 bytes, a push holds more records than the ring, a dataplane is unknown, or the token is missing
  const big = await push(cp, "backend-1", [record("r0", 5000)], auth);
  const many = await push(cp, "backend-1", [record("r0"), record("r1"), record("r2"), record("r3")], auth);
  const unknown = await push(cp, "ghost-1", [record("r0")], auth);
  const anonymous = await push(cp, "backend-1", [record("r0")]);
  // Then 413, 413, 404 and 401; nothing is held, and the pushes are counted by answer
  t.is(big.status, 413);
  t.is(many.status, 413);
  t.regex(many.body.detail, /4 records in one push; at most 3 \(--decision-samples-per-dataplane\)/);
  t.is(unknown.status, 404);
  t.is(anonymous.status, 401);
  t.is(await metric(cp, 'meshext_control_plane_decision_sample_pushes_total{result="too_large"}'), 2);
  t.is(await metric(cp, 'meshext_control_plane_decision_sample_pushes_total{result="unknown_dataplane"}'), 1);
  t.is(await metric(cp, 'meshext_control_plane_decision_sample_pushes_total{result="accepted"}'), 0);
  t.is(await metric(cp, "meshext_control_plane_decision_samples"), 0);
});

test("decision samples › each dataplane keeps its newest records; past the byte bound the largest holder loses its oldest", async (t) => {
  // Given rings of 3 records and 8 KiB across all dataplanes (records here are about 1.4 KB)
  const cp = await controlPlaneProcess(t, ["--decision-samples-per-dataplane", "3", "--decision-samples-max-bytes", "8192"]);
  t.is(await register(cp, "backend-1"), 201);
  t.is(await register(cp, "backend-2"), 201);
  // When backend-1 pushes five records one by one
  for (let i = 0; i < 5; i++) t.is((await push(cp, "backend-1", [record(`a${i}`, 1000)])).status, 200);
  // Then it holds its newest three, and the two oldest are counted ring_full
  t.deepEqual(await held(cp, "backend-1"), ["a2", "a3", "a4"]);
  t.is(await metric(cp, 'meshext_control_plane_decision_samples_dropped_total{reason="ring_full"}'), 2);
  // When backend-2 pushes three as large: six records pass 8 KiB
  const two = await push(cp, "backend-2", [1, 2, 3].map((i) => ({ ...record(`b${i}`, 1000), dataplane: "backend-2" })));
  t.is(two.status, 200);
  // Then the oldest records go, from the largest holder first, until the bound holds
  const bytes = await metric(cp, "meshext_control_plane_decision_sample_bytes");
  t.true(bytes <= 8192, `bytes held: ${bytes}`);
  const dropped = await metric(cp, 'meshext_control_plane_decision_samples_dropped_total{reason="memory_limit"}');
  t.true(dropped >= 1, `memory_limit drops: ${dropped}`);
  t.is((await held(cp, "backend-1")).length + (await held(cp, "backend-2")).length, 6 - dropped);
  t.is(await metric(cp, "meshext_control_plane_decision_samples_received_total"), 8);
  // And a deleted dataplane's records go with it
  t.is((await call(cp, "DELETE", "/meshes/default/dataplanes/backend-2")).status, 200);
  t.true((await metric(cp, 'meshext_control_plane_decision_samples_dropped_total{reason="dataplane_removed"}')) >= 1);
  t.is(await metric(cp, "meshext_control_plane_decision_samples"), (await held(cp, "backend-1")).length);
});
