// The local dataplane as every stage of the engine sees it: mesh, proxy type, inbounds with tags, labels,
// and the tag and label keys Kuma gives meaning to. Parsed from a Dataplane resource by documents/dataplane.ts.
import type { ProxyType } from "./types.js";

export const SERVICE_TAG = "kuma.io/service";

/** The values of an inbound's `state` (Kuma's api/mesh/v1alpha1 dataplane.proto, Inbound.State). */
export const INBOUND_STATES = ["Ready", "NotReady", "Ignored"] as const;

export interface Inbound {
  /** Inbound name (2.10+ sectionName) or `port` as text, or "inbound[i]". */
  name: string;
  /** The `name` the Dataplane gave this inbound, if any (2.10–2.11 sectionName matches only this). */
  declaredName?: string;
  port?: number;
  tags: Readonly<Record<string, string>>;
  /** `state: Ignored`: Kuma releases before its fix #16323 let no policy select such an inbound. */
  ignored?: true;
}

export interface Dataplane {
  mesh: string;
  name: string;
  proxyType: ProxyType;
  inbounds: Inbound[];
  /** Resource labels (`labels:` in universal form): what `kind: Dataplane` `labels` select (2.10+). */
  labels?: Readonly<Record<string, string>>;
}

/** Label keys Kuma computes and reads for scoping (pkg/core/resources/labels). */
export const LABEL = {
  namespace: "k8s.kuma.io/namespace",
  zone: "kuma.io/zone",
  origin: "kuma.io/origin",
  displayName: "kuma.io/display-name",
  role: "kuma.io/policy-role",
  effect: "kuma.io/effect",
  mesh: "kuma.io/mesh",
} as const;
