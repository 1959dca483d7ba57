// identity › client tags from peer certificate SANs, XFCC and (trusted) x-kuma-tags.
import test from "ava";
import { clientIdentity, parseKumaTagsHeader, tagSetToObject, xfccUris } from "../../extproc/policy/identity.js";

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
