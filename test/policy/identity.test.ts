// identity › client tags from peer certificate SANs, XFCC and (trusted) x-kuma-tags.
import test from "ava";
import { clientIdentity, IdentityCache, parseKumaTagsHeader, tagSetToObject, xfccUris } from "../../extproc/policy/decide/identity.js";

const id = (headers: Record<string, string>, peerUriSans: string[] = [], trust = false) =>
  clientIdentity({ headers: new Map(Object.entries(headers)), peerUriSans }, { mesh: "default", trustKumaTagsHeader: trust });

const cases = test.macro({
  exec(t, headers: Record<string, string>, sans: string[], trust: boolean, source: string, tags: Record<string, string[]>) {
    const r = id(headers, sans, trust);
    t.is(r.source as string, source);
    t.deepEqual(tagSetToObject(r.tags), tags);
  },
  title: (provided = "") => `identity › ${provided}`,
});

test("spiffe and kuma URIs from XFCC", cases, { "x-forwarded-client-cert": 'By=spiffe://default/b;Hash=1;Subject="CN=a,O=b";URI=spiffe://default/web;URI=kuma://version/v2' }, [], false, "xfcc", { "kuma.io/service": ["web"], version: ["v2"] });
test("tag keys containing a slash", cases, { "x-forwarded-client-cert": "URI=kuma://kuma.io/zone/us-east" }, [], false, "xfcc", { "kuma.io/zone": ["us-east"] });
test("quoted URI value", cases, { "x-forwarded-client-cert": 'URI="spiffe://default/web"' }, [], false, "xfcc", { "kuma.io/service": ["web"] });
test("peer SANs win over XFCC", cases, { "x-forwarded-client-cert": "URI=spiffe://default/evil" }, ["spiffe://default/web"], false, "peer-cert", { "kuma.io/service": ["web"] });
test("other trust domain gives no tag", cases, { "x-forwarded-client-cert": "URI=spiffe://other/web" }, [], false, "xfcc", {});
test("x-kuma-tags ignored when untrusted", cases, { "x-kuma-tags": "&kuma.io/service=web&" }, [], false, "none", {});
test("x-kuma-tags used when trusted", cases, { "x-kuma-tags": "&kuma.io/service=web&&version=v1,v2&" }, [], true, "x-kuma-tags", { "kuma.io/service": ["web"], version: ["v1", "v2"] });

test("identity › xfccUris takes the last element", (t) => {
  t.deepEqual(xfccUris("URI=spiffe://d/a,By=x;URI=spiffe://d/b;URI=kuma://k/v"), ["spiffe://d/b", "kuma://k/v"]);
});

test("identity › parseKumaTagsHeader skips malformed blocks", (t) => {
  t.deepEqual(tagSetToObject(parseKumaTagsHeader("&=x&&k=&&ok=1&garbage")), { ok: ["1"] });
});

const input = (headers: Record<string, string>, peerUriSans: string[] = [], sni?: string) =>
  ({ headers: new Map(Object.entries(headers)), peerUriSans, ...(sni ? { sni } : {}) });
const XFCC = { "x-forwarded-client-cert": "URI=spiffe://default/web" };

test("identity cache › given the same client bytes, when asked twice, then the same identity comes back", (t) => {
  const cache = new IdentityCache();
  const opts = { mesh: "default", trustKumaTagsHeader: false };
  t.is(cache.get(input(XFCC), opts), cache.get(input({ ...XFCC }), opts));
});

test("identity cache › given inputs differing in one part each, then each gets its own identity", (t) => {
  const cache = new IdentityCache();
  const opts = { mesh: "default", trustKumaTagsHeader: true };
  const seen = [
    input(XFCC),
    input({ "x-forwarded-client-cert": "URI=spiffe://default/api" }),
    input(XFCC, ["spiffe://default/api"]),
    input(XFCC, [], "backend.example"),
    input({ ...XFCC, "x-kuma-tags": "&version=v2&" }),
    input({}),
  ].map((i) => cache.get(i, opts));
  t.is(new Set(seen).size, seen.length);
  t.deepEqual(tagSetToObject(seen[2]!.tags), { "kuma.io/service": ["api"] }); // the peer certificate, not the cached XFCC identity
});

test("identity cache › given untrusted x-kuma-tags, then the header does not split the cache", (t) => {
  const cache = new IdentityCache();
  const opts = { mesh: "default", trustKumaTagsHeader: false };
  t.is(cache.get(input({ ...XFCC, "x-kuma-tags": "&version=v2&" }), opts), cache.get(input(XFCC), opts));
});

test("identity cache › given a full cache, when a new client comes, then it starts over and still answers right", (t) => {
  const cache = new IdentityCache(2);
  const opts = { mesh: "default", trustKumaTagsHeader: false };
  const first = cache.get(input(XFCC), opts);
  cache.get(input({ "x-forwarded-client-cert": "URI=spiffe://default/a" }), opts);
  const third = cache.get(input({ "x-forwarded-client-cert": "URI=spiffe://default/b" }), opts);
  t.deepEqual(tagSetToObject(third.tags), { "kuma.io/service": ["b"] });
  t.not(cache.get(input(XFCC), opts), first); // forgotten with the rest, worked out again
  cache.clear();
  t.not(cache.get(input({ "x-forwarded-client-cert": "URI=spiffe://default/b" }), opts), third);
});

test("identity › given a peer certificate URI that differs from a multi-URI XFCC, then only the certificate counts", (t) => {
  // Envoy's peer attribute carries the certificate's first URI SAN; the XFCC list is used in its place only
  // when it starts with that same URI. Given a certificate for web and an XFCC naming another client first
  for (const xfcc of ["URI=spiffe://default/evil;URI=kuma://version/v9", "URI=kuma://version/v9;URI=spiffe://default/web", "By=spiffe://default/orders;URI=spiffe://default/evil;URI=spiffe://default/web"]) {
    // when the identity is worked out
    const r = id({ "x-forwarded-client-cert": xfcc }, ["spiffe://default/web"]);
    // then it is the certificate's alone: web, no tag or ID from the XFCC
    t.is(r.source as string, "peer-cert", xfcc);
    t.deepEqual(tagSetToObject(r.tags), { "kuma.io/service": ["web"] }, xfcc);
    t.is(r.spiffe, "spiffe://default/web", xfcc);
  }
});

test("identity › given an XFCC that starts with the peer certificate's URI, then its further URIs complete the identity", (t) => {
  const r = id({ "x-forwarded-client-cert": "URI=spiffe://default/web;URI=kuma://version/v2" }, ["spiffe://default/web"]);
  t.is(r.source as string, "peer-cert");
  t.deepEqual(tagSetToObject(r.tags), { "kuma.io/service": ["web"], version: ["v2"] });
  t.is(r.spiffe, "spiffe://default/web,kuma://version/v2");
});
