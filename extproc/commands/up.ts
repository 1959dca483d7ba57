// `meshext up` (what `npm start` runs): the embedded control plane seeded with the repo's sample policies,
// plus a sidecar pointed at it, in one process; prints where everything listens and how to try it.
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { CONTROL_PLANE_ENV_PREFIX, CONTROL_PLANE_FLAGS, loadControlPlaneConfig } from "../config/control-plane.js";
import { formatHelp, pinnedKumaVersion } from "../config/flags.js";
import { loadSidecarConfig, SIDECAR_FLAGS, type SidecarConfig } from "../config/sidecar.js";
import { hasNoPolicies, seedFromDir } from "../control-plane/seed.js";
import { installDrain } from "../drain/install.js";
import { untilDrained } from "../drain/signals.js";
import { createLogger } from "../log.js";
import { startSidecar } from "../sidecar.js";
import { startFromConfig } from "./control-plane.js";

export const UP_USAGE = "meshext up [control-plane flags] [-- sidecar flags]";
export const UP_SUMMARY =
  "Starts the embedded control plane (seeded from envoy/policies/ when its data dir is empty) and a sidecar that follows it.";

/** The repo's sample policies, wherever the command is run from. */
export const SAMPLE_POLICIES_DIR = fileURLToPath(new URL("../../../envoy/policies/", import.meta.url));

/** Sidecar settings for `up`: pointed at our control plane, its data under .meshext/, a demo identity. */
export function upSidecarConfig(base: SidecarConfig, controlPlaneUrl: string, token: string, stateDir: string): SidecarConfig {
  return {
    ...base,
    policies: "",
    controlPlane: base.controlPlane || controlPlaneUrl,
    controlPlaneToken: base.controlPlaneToken || token,
    policyCacheFile: base.policyCacheFile || join(stateDir, "policy-cache.json"),
    dataplaneName: base.dataplaneName || "demo-app-1",
    dataplaneTags: base.dataplaneTags || "kuma.io/service=demo-app,kuma.io/protocol=http",
  };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config: cpConfig, parsed } = loadControlPlaneConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(UP_USAGE, UP_SUMMARY, CONTROL_PLANE_FLAGS, CONTROL_PLANE_ENV_PREFIX));
    process.stdout.write("\nSidecar flags (after --):\n\n" + formatHelp("meshext up -- [sidecar flags]", "", SIDECAR_FLAGS));
    return 0;
  }
  const { config: sidecarBase } = loadSidecarConfig(parsed.rest, env);
  const log = createLogger(cpConfig.logLevel);
  const stateDir = join(cpConfig.dataDir, "..");

  const cp = await startFromConfig(cpConfig, log);
  if (hasNoPolicies(cp.store)) await seedFromDir(cp.store, SAMPLE_POLICIES_DIR, log.child({ component: "seed" }), pinnedKumaVersion(cpConfig.kumaVersion));

  const config = upSidecarConfig(sidecarBase, cp.url, cpConfig.token, stateDir);
  let sidecar;
  try {
    sidecar = await startSidecar(config, log);
  } catch (err) {
    await cp.stop();
    throw err;
  }
  const drain = installDrain(sidecar, config);
  process.stderr.write(banner(cp.url, sidecar.grpcAddress, sidecar.adminAddress, cpConfig.dataDir, config));
  const result = await untilDrained(drain);
  await cp.stop();
  if (result.forced) process.exit(result.exitCode);
  return result.exitCode;
}

/** A sanitized x-forwarded-client-cert as Envoy sets it on an mTLS inbound: the client's SPIFFE ID in `URI=`. */
export const demoXfcc = (serviceAccount: string) => `By=spiffe://default.z1.mesh.local/ns/demo/sa/demo-app;URI=spiffe://default.z1.mesh.local/ns/shop/sa/${serviceAccount}`;

function banner(cpUrl: string, grpc: string, admin: string, dataDir: string, config: SidecarConfig): string {
  const explain = (sa: string) => `'{"headers":{"x-forwarded-client-cert":"${demoXfcc(sa)}"}}'`;
  const denyWeb =
    "$'type: MeshTrafficPermission\\nname: deny-web\\nmesh: default\\nspec:\\n  targetRef: {kind: Dataplane, name: " +
    config.dataplaneName +
    "}\\n  rules:\\n    - default:\\n        deny: [{spiffeID: {type: Exact, value: \"spiffe://default.z1.mesh.local/ns/shop/sa/web\"}}]\\n'";
  return [
    "",
    "meshext is up.",
    `  control plane (Kuma REST API)  ${cpUrl}        data: ${dataDir}`,
    `  sidecar ext_proc (gRPC)        ${grpc}`,
    `  sidecar admin                  http://${admin}   (/metrics /ready /drain /explain)`,
    `  this dataplane                 ${config.mesh}/${config.dataplaneName} (${config.dataplaneTags})`,
    "",
    "Try it (the samples follow Kuma 2.14: mesh mTLS on, a SPIFFE-based MeshTrafficPermission for this dataplane):",
    `  curl -s ${cpUrl}/meshes/default/meshtrafficpermissions | head -40`,
    `  curl -s ${cpUrl}/meshes/default/dataplanes/${config.dataplaneName}/_rules`,
    `  curl -s -XPOST http://${admin}/explain -d ${explain("web")}`,
    `  curl -s -XPUT ${cpUrl}/meshes/default/meshtrafficpermissions/deny-web -H 'content-type: application/yaml' --data-binary ${denyWeb}`,
    "  …then the /explain call again: the decision follows within a second (long-poll).",
    "Ctrl-C drains the sidecar, deregisters its dataplane and stops the control plane.",
    config.envoyAdmin
      ? `  (the drain ends once Envoy reports no inbound request in flight, after ${config.drainMinMs / 1000}s at least)`
      : `  (no --envoy-admin after --: the drain waits the full drain time, ${config.drainTimeMs / 1000}s; Ctrl-C again to hurry)`,
    "",
  ].join("\n");
}
