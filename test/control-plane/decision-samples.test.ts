// POST …/dataplanes/{name}/_decision-samples on the real `meshext control-plane` binary: malformed pushes get 400
// with every violation and change nothing, oversize ones 413, unknown dataplanes 404, writes need the token; the ring
// keeps each dataplane's newest records and one byte bound holds across dataplanes; the metrics count all of it.
// The last tests drive the DecisionSamples store itself (in process): ring, byte bound, eviction order and counts.
import test from "ava";
import { DecisionSamples } from "../../extproc/control-plane/decision-samples.js";
import { allowedDecisionRecord, call, dataplane, mtp } from "./helpers.js";
import { controlPlaneProcess, metric } from "./pushing-mesh.js";

/** A decision record as the sidecar writes it: `id` allowed from web on backend-1 (`pad`: a header that long). */
const record = (id: string, pad = 0): Record<string, unknown> => ({ ...allowedDecisionRecord(id), ...(pad ? { headers: { "x-pad": "p".repeat(pad) } } : {}) });
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

/** `n` lines of exactly `size` bytes each (ASCII), named `${prefix}0`…, padded with dots. */
const lines = (prefix: string, n: number, size: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`.padEnd(size, "."));
const dropCounts = (s: DecisionSamples) => Object.fromEntries(s.dropped);

test("sample store › given an empty store, when lines are added, then they are held oldest first, counted, and measured in UTF-8 bytes", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 1000 });
  t.deepEqual([s.records, s.bytes, s.received, s.held("default", "web-1")], [0, 0, 0, 0]);
  t.deepEqual(s.lines("default", "web-1"), []);
  s.add("default", "web-1", ["a", "\u00e9t\u00e9"]); // "été": 3 characters, 5 bytes
  s.add("default", "web-1", ["b"]);
  t.deepEqual(s.lines("default", "web-1"), ["a", "\u00e9t\u00e9", "b"]);
  t.is(s.held("default", "web-1"), 3);
  t.is(s.records, 3);
  t.is(s.bytes, 1 + 5 + 1);
  t.is(s.received, 3);
  t.is(s.pushes.get("accepted"), 2);
  t.deepEqual(dropCounts(s), { ring_full: 0, memory_limit: 0, dataplane_removed: 0, refused: 0 });
});

test("sample store › given two dataplanes of one name in two meshes, when both add, then each keeps its own lines", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 1000 });
  s.add("default", "web-1", ["d"]);
  s.add("prod", "web-1", ["p"]);
  s.add("default", "web-2", ["w"]);
  t.deepEqual(s.lines("default", "web-1"), ["d"]);
  t.deepEqual(s.lines("prod", "web-1"), ["p"]);
  t.deepEqual(s.lines("default", "web-2"), ["w"]);
  t.is(s.held("prod", "web-1"), 1);
  t.is(s.held("prod", "web-2"), 0);
});

test("sample store › given a copy of the held lines, when it is changed, then the store is not", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 1000 });
  s.add("default", "web-1", ["a"]);
  s.lines("default", "web-1").push("x");
  t.deepEqual(s.lines("default", "web-1"), ["a"]);
});

test("sample store › given rings of 3, when a dataplane reaches 3 and then passes it, then its oldest go as ring_full and the byte count follows", (t) => {
  const s = new DecisionSamples({ perDataplane: 3, maxBytes: 1000 });
  s.add("default", "web-1", lines("a", 3, 10));
  t.is(s.dropped.get("ring_full"), 0, "exactly full is not over");
  s.add("default", "web-1", ["b0".padEnd(20, "."), "b1".padEnd(30, ".")]);
  t.deepEqual(s.lines("default", "web-1").map((l) => l.replace(/\.+$/, "")), ["a2", "b0", "b1"]);
  t.deepEqual(dropCounts(s), { ring_full: 2, memory_limit: 0, dataplane_removed: 0, refused: 0 });
  t.is(s.records, 3);
  t.is(s.bytes, 10 + 20 + 30);
  t.is(s.received, 5);
});

test("sample store › given a byte bound, when the held bytes reach it exactly, then nothing goes; one byte past it, the oldest goes", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 30 });
  s.add("default", "web-1", lines("a", 3, 10));
  t.is(s.bytes, 30);
  t.is(s.dropped.get("memory_limit"), 0);
  s.add("default", "web-1", ["b"]);
  t.deepEqual(s.lines("default", "web-1"), [...lines("a", 3, 10).slice(1), "b"]);
  t.is(s.bytes, 21);
  t.is(s.records, 3);
  t.is(s.dropped.get("memory_limit"), 1);
});

test("sample store › given one push far past the bound, when added, then just enough of the oldest go, in one step", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 25 });
  s.add("default", "web-1", lines("a", 4, 10));
  t.deepEqual(s.lines("default", "web-1"), lines("a", 4, 10).slice(2));
  t.deepEqual([s.bytes, s.records], [20, 2]);
  t.is(s.dropped.get("memory_limit"), 2);
});

test("sample store › given the bound passed, then the dataplane holding the most bytes loses records until the bound holds, not the one that pushed", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 40 });
  s.add("default", "big", lines("a", 3, 10)); // 30 bytes in 3 records
  s.add("default", "small", ["b".padEnd(10, ".")]); // 40 bytes held: at the bound
  s.add("default", "small", ["c".padEnd(15, ".")]); // 55: big (30) holds more than small (25)
  // 15 bytes too many: big's two oldest (20 bytes) go, small keeps both of its records
  t.deepEqual(s.lines("default", "big"), lines("a", 3, 10).slice(2));
  t.is(s.held("default", "small"), 2);
  t.deepEqual([s.bytes, s.records], [35, 3]);
  t.is(s.dropped.get("memory_limit"), 2);
});

test("sample store › given pushes past the bound by dataplanes holding less than the pusher, then the pusher's records go, the others stay, and the counts stay exact", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 10 });
  s.add("default", "a", ["a".padEnd(5, ".")]);
  s.add("default", "b", ["b".padEnd(8, ".")]); // 13: b (8) goes
  t.deepEqual([s.held("default", "a"), s.held("default", "b")], [1, 0]);
  s.add("default", "c", ["c".padEnd(6, ".")]); // 11: c (6) goes, a keeps its 5 bytes
  s.add("default", "d", ["d".padEnd(3, "."), "e".padEnd(4, ".")]); // 12: d's ring (7) holds most; its oldest (3) is enough
  t.deepEqual(s.lines("default", "a"), ["a...."]);
  t.deepEqual(s.lines("default", "c"), []);
  t.deepEqual(s.lines("default", "d"), ["e..."]);
  t.deepEqual([s.bytes, s.records, s.dropped.get("memory_limit")], [9, 2, 3]);
  const alone = new DecisionSamples({ perDataplane: 10, maxBytes: 10 });
  alone.add("default", "a", ["a".padEnd(20, ".")]); // one record larger than the bound on its own
  t.deepEqual([alone.bytes, alone.records, alone.held("default", "a"), alone.dropped.get("memory_limit")], [0, 0, 0, 1]);
});

test("sample store › given two holders of equal bytes past the bound, then the one holding longest loses first", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 30 });
  s.add("default", "first", ["f".padEnd(10, ".")]);
  s.add("default", "second", ["s".padEnd(10, ".")]);
  s.add("default", "first", ["g".padEnd(5, ".")]);
  s.add("default", "second", ["t".padEnd(6, ".")]); // 31 bytes: second (16) holds more than first (15)
  t.deepEqual(s.lines("default", "second"), ["t".padEnd(6, ".")]);
  t.is(s.held("default", "first"), 2);
  const tie = new DecisionSamples({ perDataplane: 10, maxBytes: 20 });
  tie.add("default", "first", ["f".padEnd(8, ".")]);
  tie.add("default", "second", ["s".padEnd(8, ".")]);
  tie.add("default", "third", ["t".padEnd(4, ".")]); // 20: at the bound
  tie.add("default", "third", ["u"]); // 21: first and second hold 8 each, third 5
  t.deepEqual([tie.held("default", "first"), tie.held("default", "second"), tie.held("default", "third")], [0, 1, 2]);
});

test("sample store › given a dataplane that is removed, then its lines go as dataplane_removed; removing an unknown one changes nothing", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 1000 });
  s.add("default", "web-1", ["a", "bb"]);
  s.add("default", "web-2", ["c"]);
  s.remove("default", "web-1");
  s.remove("default", "ghost");
  s.remove("prod", "web-2");
  t.deepEqual(s.lines("default", "web-1"), []);
  t.deepEqual(s.lines("default", "web-2"), ["c"]);
  t.deepEqual([s.bytes, s.records], [1, 1]);
  t.deepEqual(dropCounts(s), { ring_full: 0, memory_limit: 0, dataplane_removed: 2, refused: 0 });
  s.add("default", "web-1", ["d"]);
  t.deepEqual(s.lines("default", "web-1"), ["d"], "a dataplane registered again starts empty");
});

test("sample store › given refused pushes, then each is counted by answer and its records (none unless given) as refused", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 1000 });
  s.refused("malformed", 4);
  s.refused("too_large");
  s.refused("too_large", 7);
  s.refused("unknown_dataplane");
  t.deepEqual(Object.fromEntries(s.pushes), { accepted: 0, malformed: 1, too_large: 2, unknown_dataplane: 1 });
  t.deepEqual(dropCounts(s), { ring_full: 0, memory_limit: 0, dataplane_removed: 0, refused: 11 });
  t.deepEqual([s.records, s.bytes, s.received], [0, 0, 0]);
});
