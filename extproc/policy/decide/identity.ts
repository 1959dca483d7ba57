// Who is calling: client tags from the mTLS peer (ext_proc attribute connection.uri_san_peer_certificate, or
// the x-forwarded-client-cert URI= entries Envoy sets), or from x-kuma-tags only when configured to trust it.
// spiffe://<mesh>/<service> → kuma.io/service; kuma://<key>/<value> → key=value (the URIs Kuma's CA issues;
// XFCC as pkg/xds/envoy/listeners/v3/http_connection_manager_configurer.go has Envoy set it, at v2.14.3).
import type { ClientIdentity } from "./client-steps.js";
import { tagSetKey, type IdentitySource } from "../model/client.js";
import { SERVICE_TAG } from "../model/dataplane.js";
import type { TagSet } from "../model/types.js";

// ClientIdentity is declared next to the per-client cache it carries (client-steps.ts).
export type { ClientIdentity, IdentitySource };

export interface IdentityOptions {
  mesh: string;
  trustKumaTagsHeader: boolean;
  /**
   * The inbound has no TLS (2.12+: mesh mTLS off and no MeshIdentity): no peer certificate, and an
   * x-forwarded-client-cert can only come from the client itself, so neither names the client.
   */
  plaintext?: boolean;
}

export interface IdentityInput {
  headers: ReadonlyMap<string, string>;
  peerUriSans: readonly string[];
  sni?: string;
}

export function clientIdentity(input: IdentityInput, opts: IdentityOptions): ClientIdentity {
  const sni = input.sni ? { sni: input.sni } : {};
  const xfcc = input.headers.get("x-forwarded-client-cert");
  const xfccList = xfcc && !opts.plaintext ? xfccUris(xfcc) : [];
  if (input.peerUriSans.length > 0 && !opts.plaintext) {
    const uris = peerUris(input.peerUriSans, xfccList);
    return { ...tagsFromUris(uris, opts.mesh), source: "peer-cert", spiffe: uris.join(","), ...sni };
  }
  if (xfccList.length > 0) return { ...tagsFromUris(xfccList, opts.mesh), source: "xfcc", spiffe: xfccList.join(","), ...sni };
  const kumaTags = input.headers.get("x-kuma-tags");
  if (opts.trustKumaTagsHeader && kumaTags) return { tags: parseKumaTagsHeader(kumaTags), source: "x-kuma-tags", ignored: [], ...sni };
  return { tags: new Map(), source: "none", ignored: [], ...sni };
}

/**
 * Envoy's peer attribute carries only the certificate's first URI SAN. Kuma's matchers see all of them
 * (joined with ","), so when the XFCC Envoy set lists that URI first together with more, the full list is used.
 */
function peerUris(attribute: readonly string[], xfcc: readonly string[]): readonly string[] {
  return attribute.length === 1 && xfcc.length > 1 && xfcc[0] === attribute[0] ? xfcc : attribute;
}

/** A client described by its SPIFFE ID (or legacy URI SANs), as /explain and the conformance cases give it. */
export function describedIdentity(uris: readonly string[], mesh: string, sni?: string): ClientIdentity {
  return { ...tagsFromUris(uris, mesh), source: "described", spiffe: uris.join(","), ...(sni ? { sni } : {}) };
}

/** URI SANs → tags. Only `spiffe://` URIs of our own mesh (trust domain) count, as in Kuma's RBAC principals. */
export function tagsFromUris(uris: readonly string[], mesh: string): { tags: TagSet; ignored: string[] } {
  const tags = new Map<string, Set<string>>();
  const ignored: string[] = [];
  const put = (k: string, v: string): void => {
    if (!tags.has(k)) tags.set(k, new Set());
    tags.get(k)!.add(v);
  };
  for (const uri of uris) {
    const spiffe = /^spiffe:\/\/([^/]+)\/(.+)$/.exec(uri);
    const kuma = /^kuma:\/\/(.+)\/([^/]+)$/.exec(uri);
    if (spiffe && spiffe[1] === mesh) put(SERVICE_TAG, decode(spiffe[2]!));
    else if (kuma) put(decode(kuma[1]!), decode(kuma[2]!));
    else ignored.push(uri);
  }
  return { tags, ignored };
}

/**
 * URI= values of the last (nearest) element of an x-forwarded-client-cert header.
 * Grammar: elements separated by ",", pairs by ";", values optionally double-quoted with \" escapes.
 */
export function xfccUris(header: string): string[] {
  if (!header.includes('"')) return fastXfccUris(header);
  const elements = splitOutsideQuotes(header, ",");
  const last = elements[elements.length - 1] ?? "";
  const uris: string[] = [];
  for (const pair of splitOutsideQuotes(last, ";")) {
    const eq = pair.indexOf("=");
    if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== "uri") continue;
    uris.push(unquote(pair.slice(eq + 1).trim()));
  }
  return uris.filter(Boolean);
}

/** The common unquoted form, without the character-by-character scanner. */
function fastXfccUris(header: string): string[] {
  const last = header.slice(header.lastIndexOf(",") + 1);
  const uris: string[] = [];
  for (const pair of last.split(";")) {
    const eq = pair.indexOf("=");
    if (eq === 3 && pair.slice(0, 3).toLowerCase() === "uri" && eq + 1 < pair.length) uris.push(pair.slice(eq + 1).trim());
    else if (eq > 0 && eq !== 3 && pair.slice(0, eq).trim().toLowerCase() === "uri") uris.push(pair.slice(eq + 1).trim());
  }
  return uris.filter(Boolean);
}

/**
 * Remembers identities per raw input (peer SANs, XFCC, x-kuma-tags, SNI): the same client sends the same bytes.
 * Keyed by the XFCC value, then by the other inputs joined (the empty string when all are empty, as for most
 * requests): no key is concatenated per request.
 */
export class IdentityCache {
  private readonly byXfcc = new Map<string, Map<string, ClientIdentity>>();
  private size = 0;

  constructor(private readonly maxEntries = 4096) {}

  /** Forgets every identity (with what was worked out for it under the policy set that is being replaced). */
  clear(): void {
    this.byXfcc.clear();
    this.size = 0;
  }

  get(input: IdentityInput, opts: IdentityOptions): ClientIdentity {
    const xfcc = input.headers.get("x-forwarded-client-cert") ?? "";
    const kumaTags = opts.trustKumaTagsHeader ? (input.headers.get("x-kuma-tags") ?? "") : "";
    const sni = input.sni ?? "";
    const rest = input.peerUriSans.length === 0 && kumaTags === "" && sni === "" ? "" : `${input.peerUriSans.join("\u0000")}\u0001${kumaTags}\u0001${sni}`;
    let byRest = this.byXfcc.get(xfcc);
    let id = byRest?.get(rest);
    if (!id) {
      // One object shape for every cached identity (the memo fields exist from the start), so the per-request
      // reads and the first writes of those fields stay monomorphic.
      const found = clientIdentity(input, opts);
      id = { ...found, key: tagSetKey(found.tags), ruleKey: undefined, steps: undefined };
      if (this.size >= this.maxEntries) this.clear();
      byRest = this.byXfcc.get(xfcc);
      if (!byRest) this.byXfcc.set(xfcc, (byRest = new Map()));
      byRest.set(rest, id);
      this.size++;
    }
    return id;
  }
}

/** x-kuma-tags: `&key=v1,v2&&key2=v3&`. */
export function parseKumaTagsHeader(value: string): TagSet {
  const tags = new Map<string, Set<string>>();
  for (const block of value.split("&")) {
    const eq = block.indexOf("=");
    if (eq <= 0) continue;
    const values = block.slice(eq + 1).split(",").filter(Boolean);
    if (values.length > 0) tags.set(block.slice(0, eq), new Set(values));
  }
  return tags;
}

export function tagSetToObject(tags: TagSet): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const k of [...tags.keys()].sort()) out[k] = [...tags.get(k)!].sort();
  return out;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\" && quoted && i + 1 < s.length) {
      cur += c + s[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === sep && !quoted) {
      parts.push(cur);
      cur = "";
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

function unquote(v: string): string {
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1).replace(/\\(.)/g, "$1");
  return v;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
