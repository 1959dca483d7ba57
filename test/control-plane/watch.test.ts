// ETag and long-poll on list endpoints of the embedded control plane, and the watch building blocks (tags, waits, memos).
import test from "ava";
import { call, eventually, mtp, startTestControlPlane, tempDir } from "./helpers.js";
import type { ApiError } from "../../extproc/control-plane/problems.js";
import { ChangeNotifier, MAX_WAIT_MS, collectionKey, etagMatches, etagOf, etagsOf, isLongPoll, parseWaitMs, renderWhenChanged } from "../../extproc/control-plane/watch.js";

test("watch › lists carry an ETag; If-None-Match with the same tag answers 304", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/a", mtp("a"));
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const etag = first.headers.get("etag");
  t.truthy(etag);
  const again = await fetch(cp.url + "/meshes/default/meshtrafficpermissions", { headers: { "if-none-match": etag! } });
  t.is(again.status, 304);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/b", mtp("b"));
  const changed = await fetch(cp.url + "/meshes/default/meshtrafficpermissions", { headers: { "if-none-match": etag! } });
  t.is(changed.status, 200);
  t.not(changed.headers.get("etag"), etag);
});

test("watch › ?wait holds the request until a change, then answers 200 with the new list", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const started = Date.now();
  const held = fetch(cp.url + "/meshes/default/meshtrafficpermissions?wait=20s", { headers: { "if-none-match": first.headers.get("etag")! } });
  setTimeout(() => void call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/new", mtp("new")), 300);
  const res = await held;
  const elapsedMs = Date.now() - started;
  t.is(res.status, 200);
  t.is(((await res.json()) as { total: number }).total, 1);
  t.true(elapsedMs >= 250, `answered after ${elapsedMs}ms, before the change`);
  t.true(elapsedMs < 5000, `answered after ${elapsedMs}ms`);
});

test("watch › a change in another kind or mesh does not release the wait; the wait ends with 304", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const held = fetch(cp.url + "/meshes/default/meshtrafficpermissions?wait=800ms", { headers: { "if-none-match": first.headers.get("etag")! } });
  await call(cp.url, "PUT", "/meshes/other/meshtrafficpermissions/x", mtp("x", "Allow", "other"));
  const res = await held;
  t.is(res.status, 304);
  t.is(res.headers.get("etag"), first.headers.get("etag"));
});

test("watch › stopping the control plane releases held long-polls promptly", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(() => dir.remove());
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const held = fetch(cp.url + "/meshes/default/meshtrafficpermissions?wait=60s", { headers: { "if-none-match": first.headers.get("etag")! } }).then(
    (r) => r.status,
    () => "closed",
  );
  await new Promise((r) => setTimeout(r, 100));
  const started = Date.now();
  await cp.stop();
  t.true(Date.now() - started < 3000);
  t.true(["closed", 304].includes(await held));
});

// The watch building blocks on their own: entity tags, ?wait= parsing, the notifier's versions, memos and waiters.

const never = new Promise<void>(() => {});

test("etags › given a value, when tagged, then a strong quoted tag of 27 base64url characters that follows the value's JSON", (t) => {
  const tag = etagOf({ items: [1, 2] });
  t.regex(tag, /^"[A-Za-z0-9_-]{27}"$/);
  t.is(etagOf({ items: [1, 2] }), tag);
  t.not(etagOf({ items: [2, 1] }), tag);
});

test("etags › given If-None-Match with several tags, weak and spaced, when read, then each tag in its strong form", (t) => {
  t.deepEqual(etagsOf(' "a" , W/"b",W/"c"'), ['"a"', '"b"', '"c"']);
  t.deepEqual(etagsOf(undefined), []);
  t.deepEqual(etagsOf(""), []);
});

test("etags › given a strong tag holding W/ inside it, when matched, then only a leading W/ is taken as weakness", (t) => {
  t.true(etagMatches('"xW/y"', '"xW/y"'));
  t.deepEqual(etagsOf('"xW/y"'), ['"xW/y"']);
});

test("etags › given If-None-Match *, or one of several tags, when matched, then it matches; an absent header or another tag does not", (t) => {
  t.true(etagMatches("*", '"any"'));
  t.true(etagMatches('"a", W/"b"', '"b"'));
  t.false(etagMatches('"a"', '"b"'));
  t.false(etagMatches(undefined, '"b"'));
});

test("?wait › given no or an empty wait, when parsed, then no wait; a duration or milliseconds are read, and more than a minute is held a minute", (t) => {
  t.is(parseWaitMs(null), undefined);
  t.is(parseWaitMs(""), undefined);
  t.is(parseWaitMs("30s"), 30_000);
  t.is(parseWaitMs("250"), 250);
  t.is(parseWaitMs("60s"), MAX_WAIT_MS);
  t.is(parseWaitMs("10m"), MAX_WAIT_MS);
  t.is(MAX_WAIT_MS, 60_000);
});

test("?wait › given a wait that is no duration, when parsed, then 400 naming the wait parameter and the text sent", (t) => {
  const error = t.throws(() => parseWaitMs("soon")) as ApiError;
  t.is(error.status, 400);
  t.is(error.detail, 'query parameter wait: expected a duration such as 30s, got "soon"');
});

test("long-poll › a request is held only with a non-empty ?wait= and an If-None-Match header", (t) => {
  const url = (q: string) => new URL(`http://127.0.0.1/meshes/default/meshtrafficpermissions${q}`);
  t.true(isLongPoll(url("?wait=5s"), { "if-none-match": '"a"' }));
  t.true(isLongPoll(url("?wait=5s"), { "if-none-match": "" }));
  t.false(isLongPoll(url("?wait=5s"), {}));
  t.false(isLongPoll(url("?wait="), { "if-none-match": '"a"' }));
  t.false(isLongPoll(url(""), { "if-none-match": '"a"' }));
});

test("notifier › given a write to a kind in a mesh, when notified, then that mesh's list and the every-mesh list move, not another mesh's", (t) => {
  const notifier = new ChangeNotifier();
  t.is(collectionKey("MeshTrafficPermission", "default"), "MeshTrafficPermission/default");
  t.is(collectionKey("Mesh", undefined), "Mesh/");
  notifier.notify("MeshTrafficPermission", "default");
  t.is(notifier.version(collectionKey("MeshTrafficPermission", "default")), 1);
  t.is(notifier.version(collectionKey("MeshTrafficPermission", "*")), 1);
  t.is(notifier.version(collectionKey("MeshTrafficPermission", "other")), 0);
  // and a global kind moves its one list only
  notifier.notify("Mesh");
  t.is(notifier.version(collectionKey("Mesh", undefined)), 1);
  t.is(notifier.version(collectionKey("Mesh", "*")), 0);
  notifier.touch("_policy-set/default/a");
  notifier.touch("_policy-set/default/a");
  t.is(notifier.version("_policy-set/default/a"), 2);
});

test("notifier › given waiters on two meshes of a kind, when one mesh's list changes, then its waiter and the every-mesh one are released, the other held", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  const released: string[] = [];
  const held = (key: string) => notifier.wait(key, 60_000, never).then(() => released.push(key));
  const here = held(collectionKey("MeshTrafficPermission", "default"));
  const all = held(collectionKey("MeshTrafficPermission", "*"));
  void held(collectionKey("MeshTrafficPermission", "other"));
  t.deepEqual(Object.fromEntries(notifier.waitersByKind()), { MeshTrafficPermission: 3 });
  notifier.notify("MeshTrafficPermission", "default");
  await Promise.all([here, all]);
  t.deepEqual(released.sort(), ["MeshTrafficPermission/*", "MeshTrafficPermission/default"]);
  t.deepEqual(Object.fromEntries(notifier.waitersByKind()), { MeshTrafficPermission: 1 });
});

test("notifier › given a touched key, when it has waiters, then they are released and counted no more", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  const waits = [notifier.wait("_policy-set/default/a", 60_000, never), notifier.wait("_policy-set/default/a", 60_000, never), notifier.wait("_policy-set/default/b", 60_000, never)];
  t.is(notifier.waitersByKind().get("_policy-set"), 3);
  notifier.touch("_policy-set/default/a");
  // the woken ones are no longer held on the key, even before their release has run
  t.is(notifier.waitersByKind().get("_policy-set"), 1);
  await Promise.all(waits.slice(0, 2));
  t.is(notifier.waitersByKind().get("_policy-set"), 1);
});

test("notifier › given a wait of 0 ms or less, when asked, then it resolves without being held", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  const zero = notifier.wait("K/m", 0, never);
  const negative = notifier.wait("K/m", -5, never);
  t.is(notifier.waitersByKind().size, 0);
  await Promise.all([zero, negative]);
  t.pass();
});

test("notifier › given waits that time out or are abandoned, when they end, then none is counted as held any more", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  let leave!: () => void;
  const abandoned = new Promise<void>((r) => (leave = r));
  const timed = notifier.wait("K/m", 20, never);
  const gone = notifier.wait("K/m", 60_000, abandoned);
  t.is(notifier.waitersByKind().get("K"), 2);
  await timed;
  t.is(notifier.waitersByKind().get("K"), 1);
  leave();
  await gone;
  t.deepEqual([...notifier.waitersByKind()], []);
});

test("notifier › given a key whose waiters were woken, when a new wait on it ends, then the new one is not counted any more either", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  let leaveOld!: () => void;
  const old = notifier.wait("K/m", 60_000, new Promise<void>((r) => (leaveOld = r)));
  notifier.touch("K/m");
  await old;
  // given a new waiter on the same key, when the old waiter's abandonment comes late, then the new one stays held
  const fresh = notifier.wait("K/m", 30, never);
  leaveOld();
  await Promise.resolve();
  t.is(notifier.waitersByKind().get("K"), 1);
  await fresh;
  t.deepEqual([...notifier.waitersByKind()], []);
});

test("notifier › given held waits, when closed, then all are released, later waits return at once and it reads closed", async (t) => {
  const notifier = new ChangeNotifier();
  const waits = [notifier.wait("A/m", 60_000, never), notifier.wait("B/", 60_000, never)];
  t.false(notifier.isClosed);
  notifier.close();
  t.true(notifier.isClosed);
  await Promise.all(waits);
  const later = notifier.wait("A/m", 60_000, never);
  t.is(notifier.waitersByKind().size, 0);
  await later;
  t.pass();
});

test("notifier › given a memoised rendering, when read again at the same version, then it is not rendered again; a change renders it anew", (t) => {
  const notifier = new ChangeNotifier();
  let renders = 0;
  const render = () => ({ n: ++renders });
  const key = collectionKey("MeshTrafficPermission", "default");
  t.deepEqual(notifier.rendered(key, "all", render), { n: 1 });
  t.deepEqual(notifier.rendered(key, "all", render), { n: 1 });
  // another variant (filter) of the same version is its own rendering
  t.deepEqual(notifier.rendered(key, "name=a", render), { n: 2 });
  notifier.notify("MeshTrafficPermission", "default");
  t.deepEqual(notifier.rendered(key, "all", render), { n: 3 });
  t.deepEqual(notifier.rendered(key, "name=a", render), { n: 4 });
});

test("notifier › given 1 024 renderings kept, when one more is made, then the kept ones are let go and rendered again when asked", (t) => {
  const notifier = new ChangeNotifier();
  let renders = 0;
  const render = () => ++renders;
  for (let i = 0; i < 1024; i++) notifier.rendered("K/m", `v${i}`, render);
  // at the bound every one is still kept
  t.is(notifier.rendered("K/m", "v0", render), 1);
  notifier.rendered("K/m", "v1024", render);
  t.is(renders, 1025);
  t.is(notifier.rendered("K/m", "v1", render), 1026);
  t.is(notifier.rendered("K/m", "v1024", render), 1025);
});

test("pages › given a page rendered at a version, when read again, then the same pretty JSON bytes, serialised once; a change serialises anew", (t) => {
  const notifier = new ChangeNotifier();
  let n = 0;
  const render = () => ({ total: ++n });
  const first = notifier.renderedPage("K/m", "offset=0", render);
  t.is(first.toString(), '{\n  "total": 1\n}\n');
  t.is(notifier.renderedPage("K/m", "offset=0", render), first);
  t.is(notifier.pageRenders, 1);
  t.is(notifier.renderedPage("K/m", "offset=10", render).toString(), '{\n  "total": 2\n}\n');
  notifier.touch("K/m");
  t.is(notifier.renderedPage("K/m", "offset=0", render).toString(), '{\n  "total": 3\n}\n');
  t.is(notifier.pageRenders, 3);
});

test("pages › given 1 024 pages kept, when one more is serialised, then the kept ones are let go and serialised again when asked", (t) => {
  const notifier = new ChangeNotifier();
  for (let i = 0; i < 1024; i++) notifier.renderedPage("K/m", `p${i}`, () => i);
  notifier.renderedPage("K/m", "p0", () => -1);
  t.is(notifier.pageRenders, 1024);
  notifier.renderedPage("K/m", "p1024", () => 1024);
  t.is(notifier.renderedPage("K/m", "p1", () => -1).toString(), "-1\n");
  t.is(notifier.renderedPage("K/m", "p1024", () => -1).toString(), "1024\n");
});

/** A page whose serialised body (a JSON string, then a newline) is exactly `bytes` long. */
const pageOf = (bytes: number) => () => "x".repeat(bytes - 3);

test("pages › given kept pages filling exactly 64 MiB, when they are read, then all are kept; one byte more lets the kept ones go", (t) => {
  const notifier = new ChangeNotifier();
  const half = 32 * 1024 * 1024;
  notifier.renderedPage("K/m", "a", pageOf(half));
  notifier.renderedPage("K/m", "b", pageOf(half));
  t.is(notifier.renderedPage("K/m", "a", pageOf(half)).length, half);
  t.is(notifier.pageRenders, 2);
  notifier.renderedPage("K/m", "c", pageOf(3));
  t.is(notifier.pageRenders, 3);
  notifier.renderedPage("K/m", "a", pageOf(half));
  t.is(notifier.pageRenders, 4, "a was let go when c went over the bound");
});

test("pages › given one page serialised again at each new version, when its old bytes are replaced, then they no longer count against the bound", (t) => {
  const notifier = new ChangeNotifier();
  const big = 24 * 1024 * 1024;
  notifier.renderedPage("K/m", "small", pageOf(100));
  for (let version = 0; version < 3; version++) {
    notifier.touch("K/big");
    notifier.renderedPage("K/big", "p", pageOf(big));
  }
  // 100 bytes and one 24 MiB page are kept (72 MiB if the replaced ones still counted): small is still kept
  const renders = notifier.pageRenders;
  notifier.renderedPage("K/m", "small", pageOf(100));
  t.is(notifier.pageRenders, renders);
});

/** A view whose tag is whatever `tag()` says now, counting its renders. */
function viewOf(tag: () => string) {
  const counter = { renders: 0 };
  return { counter, render: () => (counter.renders++, { etag: tag() }) };
}

test("renderWhenChanged › given a client tag that no longer matches, when asked, then the view at once, rendered once", async (t) => {
  const notifier = new ChangeNotifier();
  const { counter, render } = viewOf(() => '"new"');
  const answer = await renderWhenChanged("K/m", render, '"old"', 60_000, notifier, never);
  t.deepEqual(answer, { view: { etag: '"new"' }, notModified: false });
  t.is(counter.renders, 1);
});

test("renderWhenChanged › given a matching tag and no ?wait=, when asked, then not modified at once, rendered once", async (t) => {
  const notifier = new ChangeNotifier();
  const { counter, render } = viewOf(() => '"same"');
  t.deepEqual(await renderWhenChanged("K/m", render, '"same"', undefined, notifier, never), { view: { etag: '"same"' }, notModified: true });
  t.is(counter.renders, 1);
  t.is(notifier.waitersByKind().size, 0);
});

test("renderWhenChanged › given a held request, when a change leaves the tag and a later one moves it, then it answers the moved view", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  let tag = '"v1"';
  const { counter, render } = viewOf(() => tag);
  const answer = renderWhenChanged("K/m", render, '"v1"', 60_000, notifier, never);
  t.is(notifier.waitersByKind().get("K"), 1);
  // when the collection changes without changing this view, the request is held again
  notifier.touch("K/m");
  t.true(await eventually(() => counter.renders === 2 && notifier.waitersByKind().get("K") === 1));
  tag = '"v2"';
  notifier.touch("K/m");
  t.deepEqual(await answer, { view: { etag: '"v2"' }, notModified: false });
  t.is(counter.renders, 3);
});

test("renderWhenChanged › given a held request, when its wait runs out, then not modified with the view", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  const { render } = viewOf(() => '"same"');
  t.deepEqual(await renderWhenChanged("K/m", render, '"same"', 30, notifier, never), { view: { etag: '"same"' }, notModified: true });
  t.is(notifier.waitersByKind().size, 0);
});

test("renderWhenChanged › given a held request, when the client goes away, then it ends at once as not modified, long before its wait", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  let leave!: () => void;
  const abandoned = new Promise<void>((r) => (leave = r));
  const { counter, render } = viewOf(() => '"same"');
  const started = Date.now();
  const answer = renderWhenChanged("K/m", render, '"same"', 4_000, notifier, abandoned);
  leave();
  t.true((await answer).notModified);
  t.true(Date.now() - started < 2_000, `ended after ${Date.now() - started}ms`);
  t.is(counter.renders, 2);
});

test("renderWhenChanged › given a held request, when the notifier closes, then it ends at once as not modified, long before its wait", async (t) => {
  const notifier = new ChangeNotifier();
  const { counter, render } = viewOf(() => '"same"');
  const started = Date.now();
  const answer = renderWhenChanged("K/m", render, '"same"', 4_000, notifier, never);
  notifier.close();
  t.true((await answer).notModified);
  t.true(Date.now() - started < 2_000, `ended after ${Date.now() - started}ms`);
  t.is(counter.renders, 2);
});

test.serial("notifier › given a long wait, when it is abandoned, then it leaves no timer behind (a stopping process is not held for its wait)", async (t) => {
  const notifier = new ChangeNotifier();
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  let leave!: () => void;
  const before = timers();
  const wait = notifier.wait("K/m", 60_000, new Promise<void>((r) => (leave = r)));
  t.is(timers(), before + 1);
  leave();
  await wait;
  t.is(timers(), before);
});
