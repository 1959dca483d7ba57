// HttpPolicySource's follow loop against a scripted control plane: when it long-polls, lists again, waits, and
// what each kind of long-poll round (held 304s, a change, a failure, a mixed answer, missing lists) leads to.
import test from "ava";
import { Backoff } from "../../extproc/policy-source/backoff.js";
import { FETCHED_TYPES } from "../../extproc/policy-source/resource-set.js";
import { MAX_CHANGED_PACE_MS } from "../../extproc/policy-source/watch-pace.js";
import { sourceFor } from "./harness.js";
import { serviceMtp } from "./fixtures.js";
import { recordedLog, scriptedCp, until } from "./scripted-cp.js";

const MTP = "meshtrafficpermissions";
const ALL = FETCHED_TYPES.map((t) => t.plural).sort();
/** A backoff no test waits out: a retry delay where none is due shows as a sync that never comes. */
const longBackoff = () => new Backoff({ initialMs: 60_000, maxMs: 60_000, factor: 2 });

test("http source loop › given a first sync that read every list with an ETag, then one long-poll per list goes out at once, each asking to be held longPollWaitMs", async (t) => {
  const cp = await scriptedCp(t);
  const { source } = sourceFor(cp.url, { longPollWaitMs: 20_000, backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.is(source.status.mode, "long-poll");
  t.true(await until(() => cp.of("watch").length >= ALL.length, 3000), `${cp.of("watch").length} long-polls`);
  t.deepEqual(cp.of("watch").map((s) => s.plural).sort(), ALL);
  t.deepEqual([...new Set(cp.of("watch").map((s) => s.wait))], ["20000ms"]);
  t.true(cp.of("watch").every((s) => s.ifNoneMatch === cp.etag(s.plural)));
});

test("http source loop › given held long-polls, when a list changes, then the source lists again at once, applies the change and long-polls on the new ETag", async (t) => {
  const cp = await scriptedCp(t);
  const { source, names } = sourceFor(cp.url, { backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.true(await until(() => cp.of("watch").length >= ALL.length, 3000));
  cp.change(MTP, [serviceMtp("new", "backend", "web")]);
  t.true(await until(() => names().includes("new"), 3000), "the change is applied");
  t.true(await until(() => cp.of("watch", MTP).some((s) => s.ifNoneMatch === cp.etag(MTP)), 3000), "the next round long-polls on the new ETag");
  t.is(cp.of("list", MTP).length, 2);
  t.is(source.status.mode, "long-poll");
});

test("http source loop › given long-polls the control plane holds until their wait runs out (304), then the source keeps long-polling without listing again, paces no round and counts each a success", async (t) => {
  const cp = await scriptedCp(t);
  cp.script = (s) => {
    if (s.kind !== "watch") return;
    setTimeout(() => s.reply(304, { etag: cp.etag(s.plural) }), 150); // held as long as it asked
    return "hold";
  };
  const { source, applied, metric } = sourceFor(cp.url, { longPollWaitMs: 150, backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  const firstSuccess = source.status.lastSuccessMs!;
  t.true(await until(() => cp.of("watch").length >= 3 * ALL.length, 5000), "three rounds");
  t.is(cp.of("list").length, ALL.length, "only the first sync listed");
  t.is(await metric("meshext_control_plane_watch_paced_total"), 0);
  t.is(await metric("meshext_control_plane_sync_errors_total"), 0);
  t.true(source.status.lastSuccessMs! > firstSuccess);
  t.is(applied.length, 1);
  t.is(source.status.mode, "long-poll");
});

test("http source loop › given a round where every list answers 304 but one, which answers a new ETag after all the others, then the source lists again and applies the change", async (t) => {
  const cp = await scriptedCp(t);
  cp.script = (s) => {
    // First round: every list but MTP answers 304 and closes its connection (MTP's long-poll stays held).
    if (s.kind === "watch" && s.plural !== MTP && cp.of("watch").length <= ALL.length) s.reply(304, { etag: cp.etag(s.plural), connection: "close" });
  };
  const { source, names } = sourceFor(cp.url, { backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  // The 304s are read by the source before it closes their connections; only then does MTP's answer go out.
  t.true(await until(() => cp.of("watch").filter((s) => s.plural !== MTP && s.closed).length === ALL.length - 1 && cp.of("watch", MTP).length === 1, 3000));
  cp.change(MTP, [serviceMtp("new", "backend", "web")]);
  t.true(await until(() => names().includes("new"), 3000), "the change is applied");
  const afterWatch = cp.seen.slice(cp.seen.indexOf(cp.of("watch", MTP)[0]!) + 1).filter((s) => s.plural === MTP);
  t.is(afterWatch[0]?.kind, "list", "the round's change is read by listing again");
  t.true(await until(() => cp.of("watch", MTP).length === 2, 3000));
  t.is(source.status.mode, "long-poll");
});

test("http source loop › given a long-poll answered 503, then the failure is counted with its reason and the lists are read again only after the backoff", async (t) => {
  const cp = await scriptedCp(t);
  let failedAt = 0;
  cp.script = (s) => {
    if (s.kind === "watch" && s.plural === MTP && failedAt === 0) {
      failedAt = Date.now();
      s.reply(503, {}, { title: "busy" });
    }
  };
  const backoffMs = 1000;
  const { source, metric } = sourceFor(cp.url, { backoff: new Backoff({ initialMs: backoffMs, maxMs: backoffMs, factor: 2 }, () => 1) });
  t.teardown(() => source.stop());
  await source.start();
  t.true(await until(() => cp.of("list", MTP).length === 2, 3000), "lists again");
  const waited = cp.of("list", MTP)[1]!.at - failedAt;
  t.true(waited >= backoffMs - 50, `listed again ${waited} ms after the failure (backoff ${backoffMs} ms)`);
  t.is(await metric("meshext_control_plane_sync_errors_total", { reason: "server_error" }), 1);
  t.is(await metric("meshext_control_plane_sync_errors_total"), 1);
});

test("http source loop › given a control plane that sends ETags but answers If-None-Match with the same ETag, then the source says so and falls back to polling", async (t) => {
  const cp = await scriptedCp(t);
  cp.script = (s) => {
    if (s.kind === "watch") s.reply(200, { etag: cp.etag(s.plural) }, { total: 0, items: [], next: null });
  };
  const { log, lines } = recordedLog();
  const { source } = sourceFor(cp.url, { backoff: longBackoff(), pollIntervalMs: 100, log });
  t.teardown(() => source.stop());
  await source.start();
  t.is(source.status.mode, "long-poll");
  t.true(await until(() => source.status.mode === "poll", 3000), `mode ${source.status.mode}`);
  t.is(lines("control plane sends ETags but ignores If-None-Match; falling back to polling").length, 1);
  const watches = cp.of("watch").length;
  t.true(await until(() => cp.of("list").length >= 2 * ALL.length, 3000));
  t.is(cp.of("watch").length, watches, "no long-poll once polling");
});

test("http source loop › given a control plane without some optional lists (404), then the source long-polls on the lists it has and on none of the missing ones", async (t) => {
  const cp = await scriptedCp(t);
  cp.missing.add("meshidentities").add("meshtrusts");
  const { source, metric } = sourceFor(cp.url, { backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.is(source.status.mode, "long-poll");
  const held = ALL.filter((p) => !cp.missing.has(p));
  t.true(await until(() => cp.of("watch").filter((s) => !s.closed).length === held.length, 3000), `${cp.of("watch").length} long-polls`);
  t.deepEqual(cp.of("watch").map((s) => s.plural).sort(), held);
  t.is(await metric("meshext_control_plane_sync_errors_total"), 0);
});

test("http source loop › given a sync and a round of long-polls on every list, then no listener-leak warning is emitted for the source's abort signals", async (t) => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  t.teardown(() => void process.off("warning", onWarning));
  const cp = await scriptedCp(t);
  const { source } = sourceFor(cp.url, { backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.true(await until(() => cp.of("watch").length >= ALL.length, 3000));
  await new Promise((r) => setImmediate(r)); // process warnings are emitted on the next tick
  t.deepEqual(warnings.filter((w) => w.includes("MaxListenersExceeded")), []);
});

test("http source loop › given a sync where one list fails at once and the others are held, then the others' requests end with the failed sync, not at their timeout", async (t) => {
  const cp = await scriptedCp(t);
  cp.script = (s) => (s.plural === MTP ? s.reply(503, {}, { title: "busy" }) : "hold");
  const { source, metric } = sourceFor(cp.url, { requestTimeoutMs: 30_000, backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.is(await metric("meshext_control_plane_sync_errors_total", { reason: "server_error" }), 1);
  t.true(await until(() => cp.of("list").length === ALL.length && cp.of("list").every((s) => s.closed), 3000), `${cp.of("list").filter((s) => !s.closed).length} list requests still open`);
});

test("http source loop › given a run of long-poll rounds answered 304 at once, when the next one brings a change, then it is listed after at most the short pace cap, not the 304s' longer one", async (t) => {
  const cp = await scriptedCp(t);
  const quietRounds = 5; // paced 0, 100, 200, 400, 800 ms: the sixth in a row would wait 1600 ms, capped to 1000 for a change
  let changedAt = 0;
  cp.script = (s) => {
    if (s.kind !== "watch") return;
    if (cp.of("watch").length <= quietRounds * ALL.length) return s.reply(304, { etag: cp.etag(s.plural) });
    if (s.plural === MTP && changedAt === 0) {
      cp.change(MTP, [serviceMtp("new", "backend", "web")]); // answered below with the new ETag; the other lists are held
      changedAt = Date.now();
    }
  };
  const { source, names } = sourceFor(cp.url, { backoff: longBackoff() });
  t.teardown(() => source.stop());
  await source.start();
  t.true(await until(() => names().includes("new"), 10_000));
  const waited = cp.of("list", MTP)[1]!.at - changedAt;
  t.true(waited < MAX_CHANGED_PACE_MS + 450, `listed ${waited} ms after the change (cap ${MAX_CHANGED_PACE_MS} ms)`);
});
