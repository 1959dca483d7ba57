// The calling client as every stage may read it: its tags and where they came from, its SPIFFE ID and SNI,
// and the stable text key of a tag set. decide/identity.ts works these out from a request.
import type { TagSet } from "./types.js";

export type IdentitySource = "peer-cert" | "xfcc" | "x-kuma-tags" | "described" | "none";

/** Who a client is, as every stage may read it (decide/client-steps.ts adds its per-client cache: ClientIdentity). */
export interface ClientFacts {
  tags: TagSet;
  source: IdentitySource;
  /** URIs that did not map to a tag (other trust domain, unknown scheme). */
  ignored: string[];
  /** tagSetKey(tags), computed once. */
  key?: string;
  /**
   * What 2.12+ SPIFFE matches compare against: the peer's URI SANs joined with "," (Envoy's uri_san input),
   * so a single-URI (MeshIdentity) certificate gives its SPIFFE ID; undefined without a certificate identity.
   */
  spiffe?: string;
  /** TLS SNI the client asked for (ext_proc attribute connection.requested_server_name). */
  sni?: string;
  /** SPIFFE ID + SNI as one cache key of the rules path, computed on first use. */
  ruleKey?: string;
}

/** Stable text form of a tag set (sorted), for cache keys and logs. */
export function tagSetKey(tags: TagSet): string {
  return [...tags.keys()].sort().map((k) => `${k}=${[...tags.get(k)!].sort().join("|")}`).join("&");
}
