// Names of the generated listeners and clusters: one scheme for the generator and for whoever reads Envoy's stats.
import type { InboundListener, OutboundListener } from "./options.js";

export const CLUSTER = { sidecarGrpc: "meshext_sidecar", sidecarAdmin: "meshext_sidecar_admin", envoyAdmin: "envoy_admin" } as const;
export const inboundListenerName = (ib: Pick<InboundListener, "name">) => `inbound_${ib.name}`;
export const appClusterName = (ib: Pick<InboundListener, "name">) => `app_${ib.name}`;
export const outboundListenerName = (ob: Pick<OutboundListener, "service">) => `outbound_${ob.service}`;
export const outboundClusterName = (ob: Pick<OutboundListener, "service">) => `upstream_${ob.service}`;
export const STATS_LISTENER = "stats";
