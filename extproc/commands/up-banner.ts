// What `meshext up` prints once everything listens: the endpoints and the commands to try, through the real Envoy
// when there is one, else against the sidecar's /explain.
import type { SidecarConfig } from "../config/sidecar.js";
import type { DemoCerts } from "./up-data-plane.js";
import { DEMO_IDENTITY } from "./up-data-plane.js";

export interface DataPlaneBanner {
  certs: DemoCerts;
  /** https://127.0.0.1:<inbound port> */
  inboundUrl: string;
  appPort: number;
  envoyAdmin: string;
}

/** A sanitized x-forwarded-client-cert as Envoy sets it on an mTLS inbound: the client's SPIFFE ID in `URI=`. */
export const demoXfcc = (serviceAccount: string) => `By=${DEMO_IDENTITY.server};URI=spiffe://default.z1.mesh.local/ns/shop/sa/${serviceAccount}`;

/** What the seeded samples follow, and how a policy of that Kuma version names this dataplane. */
export interface BannerSamples {
  follows: string;
  /** The targetRef (flow YAML) of the banner's deny-web example; `{name}` stands for the dataplane's name. */
  targetRef: string;
}

export const SAMPLES_214: BannerSamples = {
  follows: "the samples follow Kuma 2.14: mesh mTLS on, a SPIFFE-based MeshTrafficPermission for this dataplane",
  targetRef: "{kind: Dataplane, name: {name}}",
};

export const SAMPLES_30: BannerSamples = {
  follows: "the samples follow Kuma 3.0, a preview: a MeshIdentity gives this dataplane mTLS, a SPIFFE-based MeshTrafficPermission selects it by labels",
  targetRef: "{kind: Dataplane, labels: {app: demo-app}}",
};

/** The PUT that denies `web` on this dataplane, as a shell argument. */
function denyWebPut(cpUrl: string, dataplaneName: string, samples: BannerSamples): string {
  const denyWeb =
    "$'type: MeshTrafficPermission\\nname: deny-web\\nmesh: default\\nspec:\\n  targetRef: " +
    samples.targetRef.replace("{name}", dataplaneName) +
    `\\n  rules:\\n    - default:\\n        deny: [{spiffeID: {type: Exact, value: "${DEMO_IDENTITY.web}"}}]\\n'`;
  return `curl -s -XPUT ${cpUrl}/meshes/default/meshtrafficpermissions/deny-web -H 'content-type: application/yaml' --data-binary ${denyWeb}`;
}

export function banner(cpUrl: string, grpc: string, admin: string, dataDir: string, config: SidecarConfig, plane: DataPlaneBanner | undefined, noPlane: string | undefined, samples: BannerSamples = SAMPLES_214): string {
  const explain = (sa: string) => `'{"headers":{"x-forwarded-client-cert":"${demoXfcc(sa)}"}}'`;
  const lines = [
    "",
    "meshext is up.",
    `  control plane (Kuma REST API)  ${cpUrl}        data: ${dataDir}`,
    `  sidecar ext_proc (gRPC)        ${grpc}`,
    `  sidecar admin                  http://${admin}   (/metrics /ready /drain /explain)`,
    `  this dataplane                 ${config.mesh}/${config.dataplaneName} (${config.dataplaneFile ? `from ${config.dataplaneFile}` : config.dataplaneTags})`,
  ];
  if (plane) {
    const curl = (who: "web" | "bot") => `curl -s --cacert ${plane.certs.ca} --cert ${plane.certs.clients[who].cert} --key ${plane.certs.clients[who].key} ${plane.inboundUrl}/`;
    lines.push(
      `  Envoy (inbound mTLS)           ${plane.inboundUrl}   admin ${plane.envoyAdmin}   demo app 127.0.0.1:${plane.appPort}`,
      `  throwaway certificates         ${plane.certs.dir}   (web: ${DEMO_IDENTITY.web}, bot: ${DEMO_IDENTITY.bot})`,
      "",
      `Try it through Envoy (${samples.follows}):`,
      `  ${curl("web")}                  # allowed: the demo app echoes the request`,
      `  ${curl("bot")}                  # denied: 403 RBAC: access denied`,
      `  ${denyWebPut(cpUrl, config.dataplaneName, samples)}`,
      "  …then the web call again: 403 within a second (long-poll).",
      `  curl -s ${cpUrl}/meshes/default/dataplanes/${config.dataplaneName}/_rules`,
      `  curl -s -XPOST http://${admin}/explain -d ${explain("web")}`,
      "Ctrl-C drains: Envoy's health check fails, its listeners drain, the dataplane deregisters, then everything stops.",
      `  (the drain ends once Envoy reports no inbound request in flight, after ${config.drainMinMs / 1000}s at least)`,
    );
  } else {
    lines.push(
      `  (no Envoy: ${noPlane}; running the sidecar alone)`,
      "",
      `Try it (${samples.follows}):`,
      `  curl -s ${cpUrl}/meshes/default/meshtrafficpermissions | head -40`,
      `  curl -s ${cpUrl}/meshes/default/dataplanes/${config.dataplaneName}/_rules`,
      `  curl -s -XPOST http://${admin}/explain -d ${explain("web")}`,
      `  ${denyWebPut(cpUrl, config.dataplaneName, samples)}`,
      "  …then the /explain call again: the decision follows within a second (long-poll).",
      "Ctrl-C drains the sidecar, deregisters its dataplane and stops the control plane.",
      config.envoyAdmin
        ? `  (the drain ends once Envoy reports no inbound request in flight, after ${config.drainMinMs / 1000}s at least)`
        : `  (no --envoy-admin after --: the drain waits the full drain time, ${config.drainTimeMs / 1000}s; Ctrl-C again to hurry)`,
    );
  }
  return [...lines, ""].join("\n");
}
