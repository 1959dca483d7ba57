// HttpPolicySource.stop() against a scripted control plane: what a stop cuts (long-polls, a sync in flight), how
// soon it settles, and that a stop is never counted as a failed sync or as a paced round.
import test from "ava";
import { Backoff } from "../../extproc/policy-source/backoff.js";
import { FETCHED_TYPES } from "../../extproc/policy-source/resource-set.js";
import { sourceFor } from "./harness.js";
import { scriptedCp, until } from "./scripted-cp.js";

const LISTS = FETCHED_TYPES.length;
const longBackoff = () => new Backoff({ initialMs: 60_000, maxMs: 60_000, factor: 2 });

/** Whether `p` settles within `ms`. */
const settlesWithin = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

test("http source stop › given held long-polls and a long backoff, when stopped, then stop settles at once and every held long-poll is closed", async (t) => {
  const cp = await scriptedCp(t);
  const { source } = sourceFor(cp.url, { backoff: longBackoff() });
  await source.start();
  t.true(await until(() => cp.of("watch").length === LISTS, 3000));
  t.true(await settlesWithin(source.stop(), 3000), "stop settled");
  t.true(await until(() => cp.of("watch").every((s) => s.closed), 3000), "the long-polls are closed");
  t.false(cp.of("watch").some((s) => s.answered));
});

test("http source stop › given a first sync the control plane holds, when stopped during it, then no sync error is counted or reported", async (t) => {
  const cp = await scriptedCp(t);
  cp.script = (s) => (s.kind === "list" ? "hold" : undefined);
  const { source, metric } = sourceFor(cp.url, { backoff: longBackoff() });
  const started = source.start();
  t.true(await until(() => cp.of("list").length === LISTS, 3000));
  t.true(await settlesWithin(source.stop(), 3000));
  t.true(await settlesWithin(started, 3000), "start settled");
  t.false(source.loaded);
  t.is(await metric("meshext_control_plane_sync_errors_total"), 0);
  t.is(source.status.lastError, undefined);
});

test("http source stop › given a long-poll round answered at once, when stopped as the next round starts, then the stop is counted neither as a paced round nor as a failed sync", async (t) => {
  const cp = await scriptedCp(t);
  const { source, metric } = sourceFor(cp.url, { backoff: longBackoff() });
  let stopping: Promise<void> | undefined;
  cp.script = (s) => {
    if (s.kind !== "watch") return;
    if (cp.of("watch").length <= LISTS) return s.reply(304, { etag: cp.etag(s.plural) }); // the first round: at once
    stopping ??= source.stop(); // the second, also at once were it answered: the first immediate round is never paced, the second would be
    return "hold";
  };
  await source.start();
  t.true(await until(() => stopping !== undefined, 3000), "the second round started");
  t.true(await settlesWithin(stopping!, 3000));
  t.is(await metric("meshext_control_plane_watch_paced_total"), 0);
  t.is(await metric("meshext_control_plane_sync_errors_total"), 0);
});
