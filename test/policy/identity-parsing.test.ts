// identity parsing › the exact URIs read from an x-forwarded-client-cert (quoted or not), the exact tags and ignored
// URIs from URI SANs, the whole identity per source (with SNI), and what the identity cache keeps apart.
import test from "ava";
import { clientIdentity, describedIdentity, IdentityCache, tagSetToObject, tagsFromUris, xfccUris } from "../../extproc/policy/decide/identity.js";

const uris = test.macro({
  exec(t, header: string, expected: string[]) {
    // Given an XFCC value; when its URIs are read; then exactly these, in order
    t.deepEqual(xfccUris(header), expected);
  },
  title: (provided = "") => `identity parsing › xfcc ${provided}`,
});

test("one URI", uris, "URI=spiffe://default/web", ["spiffe://default/web"]);
test("keys in any letter case", uris, "uri=a;Uri=b;URI=c", ["a", "b", "c"]);
test("spaces around key and value", uris, " URI = a ; URI= b ", ["a", "b"]);
test("an empty value is no URI", uris, "URI=;URI=", []);
test("keys that only contain URI are not URI", uris, "URIX=a;XURI=b;UR=c;=d;URI", []);
test("other pairs around it", uris, "Hash=1;By=spiffe://default/me;URI=spiffe://default/x;Subject=CN", ["spiffe://default/x"]);
test("only the last element", uris, "URI=a,URI=b;URI=c", ["b", "c"]);
test("the last element without URI gives none", uris, "URI=a,By=b", []);
test("quoted values keep commas and semicolons", uris, 'URI="a,b";URI="c;d"', ["a,b", "c;d"]);
test("a comma inside quotes does not end an element", uris, 'Subject="CN=a,O=b";URI=z', ["z"]);
test("an element after a quoted one", uris, 'By="x,y";URI=q,Subject="s";URI="spiffe://default/r"', ["spiffe://default/r"]);
test("an escaped quote stays inside the value", uris, 'URI="a\\",b"', ['a",b']);
test("an escaped backslash", uris, 'URI="a\\\\b"', ["a\\b"]);
test("an empty quoted value is no URI", uris, 'URI="";URI="x"', ["x"]);
test("spaces around a quoted value's key", uris, ' uri = "x" ', ["x"]);
test("an unterminated quote is kept as written", uris, 'URI="a', ['"a']);
test("a quote opened in another pair holds the rest", uris, 'Hash="1;URI="a', []);
test("a pair without = among quoted ones", uris, 'URI="a";By', ["a"]);

test("identity parsing › tags from URI SANs: our mesh's SPIFFE IDs, kuma:// tags, every other URI ignored", (t) => {
  // Given URIs of every kind
  const input = [
    "spiffe://default/web",
    "spiffe://other/x",
    "kuma://version/v1",
    "kuma://version/v2",
    "kuma://kuma.io/zone/east",
    "urn:x",
    "spiffe://default/a%2Fb",
    "kuma://k/%E0%A4%A",
    "spiffe://default/",
    "xspiffe://default/web",
    "xkuma://a/b",
    "spiffe://default/web\nevil",
  ];
  // When they become tags
  const r = tagsFromUris(input, "default");
  // Then values of one key add up, %-escapes are decoded (a bad one kept as is), and the rest is listed as ignored
  t.deepEqual(tagSetToObject(r.tags), { "kuma.io/service": ["a/b", "web"], version: ["v1", "v2"], "kuma.io/zone": ["east"], k: ["%E0%A4%A"] });
  t.deepEqual(r.ignored, ["spiffe://other/x", "urn:x", "spiffe://default/", "xspiffe://default/web", "xkuma://a/b", "spiffe://default/web\nevil"]);
});

test("identity parsing › tag objects list keys and values sorted", (t) => {
  // Given tags inserted out of order; when turned into an object; then keys and values are sorted
  const o = tagSetToObject(new Map([["z", new Set(["b", "a"])], ["a", new Set(["2", "1"])]]));
  t.deepEqual(Object.keys(o), ["a", "z"]);
  t.deepEqual(o, { a: ["1", "2"], z: ["a", "b"] });
});

const opts = { mesh: "default", trustKumaTagsHeader: true };
const headers = (h: Record<string, string>) => new Map(Object.entries(h));

test("identity parsing › the whole identity of each source, with the SNI when there is one", (t) => {
  // Given one request per source, each with an SNI; when identified; then
  const sni = "backend.mesh";
  const peer = clientIdentity({ headers: headers({}), peerUriSans: ["spiffe://default/web", "urn:x"], sni }, opts);
  t.deepEqual({ ...peer, tags: tagSetToObject(peer.tags) }, { tags: { "kuma.io/service": ["web"] }, ignored: ["urn:x"], source: "peer-cert", spiffe: "spiffe://default/web,urn:x", sni });
  const xfcc = clientIdentity({ headers: headers({ "x-forwarded-client-cert": "URI=spiffe://default/api" }), peerUriSans: [], sni }, opts);
  t.deepEqual({ ...xfcc, tags: tagSetToObject(xfcc.tags) }, { tags: { "kuma.io/service": ["api"] }, ignored: [], source: "xfcc", spiffe: "spiffe://default/api", sni });
  const kuma = clientIdentity({ headers: headers({ "x-kuma-tags": "&version=v3&" }), peerUriSans: [], sni }, opts);
  t.deepEqual({ ...kuma, tags: tagSetToObject(kuma.tags) }, { tags: { version: ["v3"] }, source: "x-kuma-tags", ignored: [], sni });
  const none = clientIdentity({ headers: headers({}), peerUriSans: [], sni }, opts);
  t.deepEqual({ ...none, tags: tagSetToObject(none.tags) }, { tags: {}, source: "none", ignored: [], sni });
  // and without an SNI there is no sni field
  t.false("sni" in clientIdentity({ headers: headers({}), peerUriSans: [] }, opts));
  t.false("sni" in clientIdentity({ headers: headers({}), peerUriSans: [], sni: "" }, opts));
});

test("identity parsing › a plaintext inbound ignores the peer certificate and the XFCC, not a trusted x-kuma-tags", (t) => {
  // Given a request with all three sources on a plaintext inbound; when identified; then x-kuma-tags names it
  const input = { headers: headers({ "x-forwarded-client-cert": "URI=spiffe://default/api", "x-kuma-tags": "&version=v3&" }), peerUriSans: ["spiffe://default/web"] };
  t.is(clientIdentity(input, { ...opts, plaintext: true }).source, "x-kuma-tags");
  t.is(clientIdentity(input, { ...opts, trustKumaTagsHeader: false, plaintext: true }).source, "none");
});

test("identity parsing › the XFCC completes the certificate's URIs only when the attribute has one URI and the XFCC more", (t) => {
  const xfcc = (v: string) => headers({ "x-forwarded-client-cert": v });
  // Given an attribute of two URIs and an XFCC of three starting with the same: the attribute's
  t.is(clientIdentity({ headers: xfcc("URI=spiffe://default/web;URI=kuma://version/v1;URI=kuma://zone/z"), peerUriSans: ["spiffe://default/web", "kuma://version/v1"] }, opts).spiffe, "spiffe://default/web,kuma://version/v1");
  // an attribute of one and an XFCC of the same one: the attribute's
  t.is(clientIdentity({ headers: xfcc("URI=spiffe://default/web"), peerUriSans: ["spiffe://default/web"] }, opts).spiffe, "spiffe://default/web");
  // an attribute of one and an XFCC of two: the XFCC's
  t.is(clientIdentity({ headers: xfcc("URI=spiffe://default/web;URI=kuma://version/v1"), peerUriSans: ["spiffe://default/web"] }, opts).spiffe, "spiffe://default/web,kuma://version/v1");
});

test("identity parsing › a described client: its URIs' tags, source described, its SNI when given", (t) => {
  // Given a SPIFFE ID and a kuma URI; when described; then
  const d = describedIdentity(["spiffe://default/web", "kuma://version/v1"], "default", "api.mesh");
  t.deepEqual({ ...d, tags: tagSetToObject(d.tags) }, { tags: { "kuma.io/service": ["web"], version: ["v1"] }, ignored: [], source: "described", spiffe: "spiffe://default/web,kuma://version/v1", sni: "api.mesh" });
  t.false("sni" in describedIdentity(["spiffe://default/web"], "default"));
});

const input = (h: Record<string, string>, peerUriSans: string[] = [], sni?: string) => ({ headers: headers(h), peerUriSans, ...(sni !== undefined ? { sni } : {}) });

test("identity parsing › the cache keeps clients apart that differ only in trusted x-kuma-tags, SNI or how SANs split", (t) => {
  // Given a cache trusting x-kuma-tags
  const cache = new IdentityCache();
  const X = { "x-forwarded-client-cert": "URI=spiffe://default/web" };
  // When clients that differ in one part are identified; then each gets its own, right identity
  const plain = cache.get(input(X), opts);
  const tagged = cache.get(input({ ...X, "x-kuma-tags": "&version=v2&" }), opts);
  t.not(plain, tagged);
  t.is(tagged.source, "xfcc");
  const onlyTags = cache.get(input({ "x-kuma-tags": "&version=v2&" }), opts);
  t.deepEqual(tagSetToObject(onlyTags.tags), { version: ["v2"] });
  // the same XFCC with and without an SNI are both kept
  const withSni = cache.get(input(X, [], "a.mesh"), opts);
  t.is(withSni.sni, "a.mesh");
  t.is(cache.get(input(X), opts), plain);
  t.is(cache.get(input(X, [], "a.mesh"), opts), withSni);
  // x-kuma-tags and an SNI with the same text are different clients
  const tagsText = cache.get(input({ "x-kuma-tags": "&zone=z&" }), opts);
  const sniText = cache.get(input({}, [], "&zone=z&"), opts);
  t.is(tagsText.source, "x-kuma-tags");
  t.is(sniText.source, "none");
  // two SANs are not the one SAN their texts make together
  const two = cache.get(input({}, ["spiffe://default/a", "kuma://version/v1"]), opts);
  const joined = cache.get(input({}, ["spiffe://default/akuma://version/v1"]), opts);
  t.deepEqual(tagSetToObject(two.tags), { "kuma.io/service": ["a"], version: ["v1"] });
  t.deepEqual(tagSetToObject(joined.tags), { "kuma.io/service": ["akuma://version/v1"] });
});

test("identity parsing › the cache keeps every client up to its size, and hits do not count", (t) => {
  // Given a cache of 3
  const cache = new IdentityCache(3);
  const X = (s: string) => input({ "x-forwarded-client-cert": `URI=spiffe://default/${s}` });
  const noTrust = { mesh: "default", trustKumaTagsHeader: false };
  // When three clients are identified, and the first again several times
  const a = cache.get(X("a"), noTrust);
  const b = cache.get(X("b"), noTrust);
  for (let i = 0; i < 5; i++) t.is(cache.get(X("a"), noTrust), a);
  const c = cache.get(X("c"), noTrust);
  // Then all three are kept
  t.is(cache.get(X("b"), noTrust), b);
  t.is(cache.get(X("c"), noTrust), c);
  t.is(cache.get(X("a"), noTrust), a);
  // and a fourth starts it over
  cache.get(X("d"), noTrust);
  t.not(cache.get(X("a"), noTrust), a);
});
