// Kuma-style list paging (paging.ts): size/offset validation, the absolute `next` URL built from the Host header,
// the name filter, the collection ETag, and the shared page bytes told apart by filter, bounds and host.
import test from "ava";
import { header, listReply, pageBounds, pageReply, type ListRequest } from "../../extproc/control-plane/paging.js";
import { ApiError } from "../../extproc/control-plane/problems.js";
import { ChangeNotifier } from "../../extproc/control-plane/watch.js";

const SIZE_RULE = { field: "size", message: "must be an integer from 1 to 1000" };
const OFFSET_RULE = { field: "offset", message: "must be a non-negative integer (the `offset` of a `next` URL)" };
const never = new Promise<void>(() => {});

const request = (pathAndQuery: string, headers: ListRequest["headers"] = { host: "cp.example:5681" }, abandoned = never): ListRequest => ({
  url: new URL(pathAndQuery, "http://ignored.invalid"),
  headers,
  abandoned,
});
const bounds = (query: string) => pageBounds(new URL(`http://h/x${query}`));
const refused = (query: string) => {
  const err = (() => {
    try {
      bounds(query);
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  if (!(err instanceof ApiError)) throw new Error(`${query}: expected an ApiError, got ${String(err)}`);
  return err;
};
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "Thing", name: `item-${i}` }));
const names = (body: unknown) => (body as { items: Array<{ name: string }> }).items.map((i) => i.name);
const json = (bytes: Buffer | undefined) => JSON.parse(bytes!.toString("utf8"));

test("paging › given no size and no offset, when bounding, then Kuma's default page of 100 from the start", (t) => {
  t.deepEqual(bounds(""), { size: 100, offset: 0 });
  t.deepEqual(bounds("?size=&offset="), { size: 100, offset: 0 });
});

test("paging › given size and offset at their limits, when bounding, then they are taken as given", (t) => {
  t.deepEqual(bounds("?size=1&offset=0"), { size: 1, offset: 0 });
  t.deepEqual(bounds("?size=1000&offset=12345"), { size: 1000, offset: 12345 });
});

test("paging › given a size that is not an integer from 1 to 1000, when bounding, then 400 naming the size parameter", (t) => {
  for (const size of ["0", "-1", "1001", "1.5", "ten", "Infinity"]) {
    const err = refused(`?size=${size}`);
    t.is(err.status, 400, size);
    t.is(err.detail, "invalid pagination parameters");
    t.deepEqual(err.violations, [SIZE_RULE], size);
    t.deepEqual(err.body().invalid_parameters, [{ field: "size", reason: SIZE_RULE.message }]);
  }
});

test("paging › given an offset that is not a non-negative integer, when bounding, then 400 naming the offset parameter", (t) => {
  for (const offset of ["-1", "0.5", "two", "-Infinity"]) {
    const err = refused(`?offset=${offset}`);
    t.is(err.status, 400, offset);
    t.deepEqual(err.violations, [OFFSET_RULE], offset);
  }
});

test("paging › given both size and offset bad, when bounding, then both are named, size first", (t) => {
  t.deepEqual(refused("?size=0&offset=-1").violations, [SIZE_RULE, OFFSET_RULE]);
});

test("paging › given five items and size=2, when replying with the first page, then two items, the total and an absolute next on the request's host", (t) => {
  const reply = pageReply(request("/meshes/default/things?size=2"), items(5));
  t.is(reply.status, 200);
  t.deepEqual(reply.headers, {});
  t.deepEqual(reply.body, { total: 5, items: items(5).slice(0, 2), next: "http://cp.example:5681/meshes/default/things?size=2&offset=2" });
});

test("paging › given an offset in the middle, when replying, then that slice and a next after it", (t) => {
  const reply = pageReply(request("/things?size=2&offset=1"), items(5));
  t.deepEqual(names(reply.body), ["item-1", "item-2"]);
  t.is((reply.body as { next: string }).next, "http://cp.example:5681/things?size=2&offset=3");
});

test("paging › given a page that reaches the last item exactly, when replying, then next is null", (t) => {
  const reply = pageReply(request("/things?size=2&offset=3"), items(5));
  t.deepEqual(reply.body, { total: 5, items: items(5).slice(3), next: null });
  t.is((pageReply(request("/things?size=5"), items(5)).body as { next: unknown }).next, null);
  t.deepEqual(pageReply(request("/things?offset=9"), items(5)).body, { total: 5, items: [], next: null });
});

test("paging › given no Host header, when the next URL is built, then it names localhost", (t) => {
  const reply = pageReply(request("/things?size=1", {}), items(2));
  t.is((reply.body as { next: string }).next, "http://localhost/things?size=1&offset=1");
});

test("paging › given an empty Host header (a request target without authority), when the next URL is built, then it names localhost", (t) => {
  const reply = pageReply(request("/things?size=1", { host: "" }), items(2));
  t.is((reply.body as { next: string }).next, "http://localhost/things?size=1&offset=1");
});

test("paging › given a Host header that is no authority, when a next URL is needed, then 400 naming the Host header", (t) => {
  for (const host of ["a b", "x:99999"]) {
    const err = t.throws(() => pageReply(request("/things?size=1", { host }), items(2)), { instanceOf: ApiError });
    t.is(err!.status, 400);
    t.is(err!.detail, `the Host header ${JSON.stringify(host)} cannot name the next page (next URL)`);
  }
  // a single page needs no next URL
  t.deepEqual(pageReply(request("/things?size=2", { host: "a b" }), items(2)).body, { total: 2, items: items(2), next: null });
});

test("paging › given the default size and more items, when replying, then next spells out size=100", (t) => {
  const reply = pageReply(request("/things"), items(101));
  t.is(names(reply.body).length, 100);
  t.is((reply.body as { next: string }).next, "http://cp.example:5681/things?size=100&offset=100");
});

test("paging › given a long-poll with a name filter, when the next URL is built, then it keeps the filter and drops wait", (t) => {
  const reply = pageReply(request("/things?name=item&wait=30s&size=1"), items(3));
  t.is((reply.body as { next: string }).next, "http://cp.example:5681/things?name=item&size=1&offset=1");
});

test("paging › given headers and a view, when replying, then the headers are kept and only the page's items are viewed", (t) => {
  const viewed: string[] = [];
  const view = (item: { type: string; name: string }) => (viewed.push(item.name), { ...item, name: item.name.toUpperCase() });
  const reply = pageReply(request("/things?size=2&offset=1"), items(5), { etag: '"v1"' }, view);
  t.deepEqual(reply.headers, { etag: '"v1"' });
  t.deepEqual(names(reply.body), ["ITEM-1", "ITEM-2"]);
  t.deepEqual(viewed, ["item-1", "item-2"]);
});

test("paging › given a header sent once, several times or not at all, when read, then its value, the values joined by a comma, or undefined", (t) => {
  t.is(header({ headers: { host: "a" } }, "host"), "a");
  t.is(header({ headers: { "x-list": ["a", "b", "c"] } }, "x-list"), "a, b, c");
  t.is(header({ headers: {} }, "host"), undefined);
});

test("list › given a name filter, when listing, then only the items whose name contains it, with the collection's ETag", async (t) => {
  const notifier = new ChangeNotifier();
  const all = [{ type: "T", name: "web-1" }, { type: "T", name: "backend" }, { type: "T", name: "web-2" }];
  const reply = await listReply(request("/things?name=web"), notifier, { kind: "T", mesh: "m" }, () => all);
  t.is(reply.status, 200);
  t.deepEqual(json(reply.bytes), { total: 2, items: [all[0], all[2]], next: null });
  t.regex(reply.headers!.etag!, /^"[A-Za-z0-9_-]+"$/);
  const unfiltered = await listReply(request("/things"), notifier, { kind: "T", mesh: "m" }, () => all);
  t.is(json(unfiltered.bytes).total, 3);
  t.not(unfiltered.headers!.etag, reply.headers!.etag);
});

test("list › given the client's ETag still matches, when listing without wait, then 304 with the ETag and no body", async (t) => {
  const notifier = new ChangeNotifier();
  const first = await listReply(request("/things"), notifier, { kind: "T" }, () => items(3));
  const again = await listReply(request("/things", { "if-none-match": first.headers!.etag! }), notifier, { kind: "T" }, () => items(3));
  t.deepEqual(again, { status: 304, headers: { etag: first.headers!.etag! } });
});

test("list › given one collection version, when pages differ in size, offset, name filter or host, then each gets its own page", async (t) => {
  const notifier = new ChangeNotifier();
  const list = (path: string, host = "a.example") => listReply(request(path, { host }), notifier, { kind: "T", mesh: "m" }, () => items(12));
  t.deepEqual(names(json((await list("/things?size=2")).bytes)), ["item-0", "item-1"]);
  t.deepEqual(names(json((await list("/things?size=3")).bytes)), ["item-0", "item-1", "item-2"]);
  t.deepEqual(names(json((await list("/things?size=3&offset=3")).bytes)), ["item-3", "item-4", "item-5"]);
  t.deepEqual(names(json((await list("/things?size=3&offset=3&name=item-1")).bytes)), []);
  t.deepEqual(names(json((await list("/things?size=3&name=item-1")).bytes)), ["item-1", "item-10", "item-11"]);
  t.is(json((await list("/things?size=3", "b.example")).bytes).next, "http://b.example/things?size=3&offset=3");
  t.is(json((await list("/things?size=3")).bytes).next, "http://a.example/things?size=3&offset=3");
  // the pages asked again (size=3 on a.example, twice) are the bytes rendered the first time
  const again = await list("/things?size=3");
  t.is(notifier.pageRenders, 6);
  t.deepEqual(names(json(again.bytes)), ["item-0", "item-1", "item-2"]);
});

test("list › given no Host header and then an empty one, when listing, then both get the one page naming localhost, rendered once", async (t) => {
  const notifier = new ChangeNotifier();
  const list = (headers: ListRequest["headers"]) => listReply(request("/things?size=1", headers), notifier, { kind: "T" }, () => items(2));
  t.is(json((await list({})).bytes).next, "http://localhost/things?size=1&offset=1");
  t.is(json((await list({ host: "" })).bytes).next, "http://localhost/things?size=1&offset=1");
  t.is(notifier.pageRenders, 1);
});

test("list › given a view, when listing, then the page is the viewed items (not shared bytes) under the collection's ETag", async (t) => {
  const notifier = new ChangeNotifier();
  const view = (item: { type: string; name: string }) => ({ ...item, live: true });
  const reply = await listReply(request("/things?size=1"), notifier, { kind: "T", mesh: "m" }, () => items(2), view);
  t.is(reply.status, 200);
  t.is(reply.bytes, undefined);
  t.deepEqual(reply.body, { total: 2, items: [{ type: "Thing", name: "item-0", live: true }], next: "http://cp.example:5681/things?size=1&offset=1" });
  t.regex(reply.headers!.etag!, /^"[A-Za-z0-9_-]+"$/);
  t.is(notifier.pageRenders, 0);
});

test("list › given a long-poll with a bad size, when listing, then 400 at once, before the request is held", async (t) => {
  const notifier = new ChangeNotifier();
  const etag = (await listReply(request("/things"), notifier, { kind: "T" }, () => items(1))).headers!.etag!;
  let release!: () => void;
  const abandoned = new Promise<void>((r) => (release = r));
  const reply = listReply(request("/things?wait=1m&size=0", { "if-none-match": etag }, abandoned), notifier, { kind: "T" }, () => items(1));
  const held = notifier.waitersByKind().get("T") ?? 0;
  release();
  const err = await t.throwsAsync(reply, { instanceOf: ApiError });
  t.is(held, 0);
  t.deepEqual(err!.violations, [SIZE_RULE]);
});
