// HttpPolicySource on a control plane that offers this dataplane's own set, scripted: long-polls on the set
// (held, failed), and before the dataplane is registered, the lists long-polled for ever longer rounds.
import test from "ava";
import { POLICY_SET_FEATURE } from "../../extproc/kuma-rest/features.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { Backoff } from "../../extproc/policy-source/backoff.js";
import { FETCHED_TYPES } from "../../extproc/policy-source/resource-set.js";
import { sourceFor } from "./harness.js";
import { dataplaneDoc, serviceMtp } from "./fixtures.js";
import { type ScriptedCp, scriptedCp, until } from "./scripted-cp.js";

const LISTS = FETCHED_TYPES.length;
const DOC = dataplaneDoc("a", "svc-a");
const dataplane = () => dataplaneFromObject(DOC).dataplane!;
const longBackoff = () => new Backoff({ initialMs: 60_000, maxMs: 60_000, factor: 2 });

/** A control plane offering the set; `registered`: whether it serves this dataplane's (else 404, as before registration). */
async function setCp(t: import("ava").ExecutionContext, registered: boolean): Promise<ScriptedCp> {
  const cp = await scriptedCp(t);
  cp.features = [POLICY_SET_FEATURE];
  if (registered) cp.script = (s) => (s.kind === "set" ? s.reply(200, { etag: '"set-1"' }, { dataplane: DOC, items: [serviceMtp("on-a", "svc-a", "web")] }) : undefined);
  return cp;
}

test("http source set › given the dataplane's set long-polled and answered 304 when the wait runs out, then the set is not read again", async (t) => {
  const cp = await setCp(t, true);
  const serve = cp.script!;
  cp.script = (s) => {
    if (s.kind !== "set-watch") return serve(s);
    setTimeout(() => s.reply(304, { etag: '"set-1"' }), 150);
    return "hold";
  };
  const { source, names, metric } = sourceFor(cp.url, { dataplane, longPollWaitMs: 150, backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.deepEqual(names(), ["on-a"]);
  t.true(await until(() => cp.of("set-watch").length >= 3, 5000), "three rounds");
  t.true(cp.of("set-watch").every((s) => s.ifNoneMatch === '"set-1"'));
  t.is(cp.of("set").length, 1, "read once, at start");
  t.is(cp.of("list").length, 0);
  t.is(await metric("meshext_control_plane_sync_errors_total"), 0);
});

test("http source set › given a long-poll on the set answered 503, then the failure is counted with its reason", async (t) => {
  const cp = await setCp(t, true);
  const serve = cp.script!;
  cp.script = (s) => (s.kind === "set-watch" ? s.reply(503, {}, { title: "busy" }) : serve(s));
  const { source, metric } = sourceFor(cp.url, { dataplane, backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.true(await until(async () => (await metric("meshext_control_plane_sync_errors_total")) > 0, 3000));
  t.is(await metric("meshext_control_plane_sync_errors_total", { reason: "server_error" }), 1);
  t.is(source.status.lastError?.reason, "server_error");
});

test("http source set › given a set offered but this dataplane not registered yet, then the lists are long-polled for 1 s, 2 s, 4 s..., the set asked for after each quiet round and once per change", async (t) => {
  const cp = await setCp(t, false);
  cp.script = (s) => {
    if (s.kind === "watch" && cp.of("watch").length <= 2 * LISTS) s.reply(304, { etag: cp.etag(s.plural) }); // two quiet rounds
  };
  const { source, names } = sourceFor(cp.url, { dataplane, backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.is(cp.of("set").length, 1);
  t.true(await until(() => cp.of("watch").length === 3 * LISTS, 3000), "the third round is held");
  const waits = [0, 1, 2].map((round) => [...new Set(cp.of("watch").slice(round * LISTS, (round + 1) * LISTS).map((s) => s.wait))]);
  t.deepEqual(waits, [["1000ms"], ["2000ms"], ["4000ms"]]);
  t.is(cp.of("set").length, 3, "asked at start and after each quiet round");
  cp.change("meshtrafficpermissions", [serviceMtp("new", "svc-a", "web")]);
  t.true(await until(() => names().includes("new") && cp.of("watch").length === 4 * LISTS, 3000));
  t.is(cp.of("set").length, 4, "asked once more, with the lists");
});
