// identity xfcc › the URIs read from x-forwarded-client-cert (quoted and unquoted forms), kuma:// SANs, and the identity cache's keys (x-kuma-tags, SNI).
import test from "ava";
import { IdentityCache, tagsFromUris, xfccUris } from "../../extproc/policy/decide/identity.js";

const WEB = "spiffe://default/web";

const uris = test.macro({
  exec(t, header: string, expected: string[]) {
    // given an x-forwarded-client-cert header; when its URIs are read; then they are `expected`
    t.deepEqual(xfccUris(header), expected);
  },
  title: (provided = "") => `identity xfcc › ${provided}`,
});

// the unquoted form (the fast path)
test("a key that only starts with URI is not URI", uris, `Hash=1;URIX=spiffe://default/b;URI=${WEB}`, [WEB]);
test("a pair without '=' is no URI, even one starting with uri", uris, `urix;URI=${WEB}`, [WEB]);
test("a URI= with only blanks is no URI", uris, "Hash=1;URI= ", []);
test("a URI value is trimmed", uris, `URI= ${WEB} `, [WEB]);
test("a three-letter key other than URI is not URI", uris, `DNS=spiffe://default/b;URI=${WEB}`, [WEB]);
// the quoted form
test("quoted: only URI pairs count", uris, `By="spiffe://default/proxy";URI="${WEB}";Hash=abc`, [WEB]);
test("quoted: a pair without '=' is no URI, even one starting with uri", uris, `By="x";uri1;URI=${WEB}`, [WEB]);
test("quoted elsewhere: an unquoted URI value is kept whole", uris, `By="x";URI=${WEB}`, [WEB]);
test("quoted: a lone quote is a value, not an empty quoted one", uris, 'URI="', ['"']);
test("quoted: a value only ending in a quote is not unquoted", uris, `URI=${WEB}"`, [`${WEB}"`]);
test("quoted: a backslash closing an unterminated quote is kept as is", uris, `URI="${WEB}\\`, [`"${WEB}\\`]);

test("identity xfcc › a kuma:// SAN with a trailing slash is not a tag", (t) => {
  // given a kuma:// URI whose value part is empty; when read as tags; then it is ignored
  t.deepEqual(tagsFromUris(["kuma://version/"], "default"), { tags: new Map(), ignored: ["kuma://version/"] });
  t.deepEqual(tagsFromUris(["kuma://version/v1/"], "default"), { tags: new Map(), ignored: ["kuma://version/v1/"] });
});

const request = (headers: Record<string, string>, sni?: string) => ({ headers: new Map(Object.entries(headers)), peerUriSans: [], ...(sni ? { sni } : {}) });

test("identity xfcc › trusted x-kuma-tags: clients with different tags are different cached identities", (t) => {
  // given a cache trusting x-kuma-tags; when two clients send different tags
  const cache = new IdentityCache();
  const opts = { mesh: "default", trustKumaTagsHeader: true };
  const a = cache.get(request({ "x-kuma-tags": "&kuma.io/service=a&" }), opts);
  const b = cache.get(request({ "x-kuma-tags": "&kuma.io/service=b&" }), opts);
  // then each gets its own tags
  t.is(a.key, "kuma.io/service=a");
  t.is(b.key, "kuma.io/service=b");
  t.is(b.source, "x-kuma-tags");
});

test("identity xfcc › clients that differ only by SNI are different cached identities", (t) => {
  // given a cache; when two clients without certificates send different SNIs
  const cache = new IdentityCache();
  const opts = { mesh: "default", trustKumaTagsHeader: false };
  const a = cache.get(request({}, "a.mesh"), opts);
  const b = cache.get(request({}, "b.mesh"), opts);
  // then each identity carries its own SNI
  t.is(a.sni, "a.mesh");
  t.is(b.sni, "b.mesh");
});
