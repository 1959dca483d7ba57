// The admin surface seen from another host: a pod network namespace runs the sidecar, a peer
// namespace joined by a veth plays the rest of the cluster. Routes that drain or disclose refuse
// the peer (403) and answer loopback or the admin token; /metrics and /ready stay reachable.
import { ENVOY_FLAGS } from "../../extproc/config/envoy.js";
import test, { type ExecutionContext } from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { installDrain } from "../../extproc/drain/install.js";
import { renderSidecar } from "../../extproc/inject/render.js";
import { silentLogger } from "../../extproc/log.js";
import { startSidecar } from "../../extproc/sidecar.js";
import { CLI_PATH } from "../drain/meshext-process.js";
import { settings } from "../inject/helpers.js";
import { createNetnsPair, type FetchResult, netnsUnavailable, type NetnsPair } from "../helpers/netns.js";

test.serial.before((t) => {
  const why = netnsUnavailable();
  if (why) t.log(`skipping the network-namespace tests: ${why}`);
});

function statusOf(r: FetchResult): number | string {
  return "status" in r ? r.status : r.error;
}

/** Starts `meshext <args>` inside the pod namespace and waits until its admin port answers on loopback. */
async function startInPod(t: ExecutionContext, net: NetnsPair, args: string[], env: Record<string, string> = {}): Promise<ChildProcess> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MESHEXT_")));
  const child = net.spawnInPod([process.execPath, CLI_PATH, ...args], { ...clean, ...env });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  child.stdout!.resume();
  t.teardown(() => void child.kill("SIGKILL"));
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`sidecar exited: ${stderr}`);
    if ("status" in (await net.fetchFrom("pod", "http://127.0.0.1:9902/metrics", { timeoutMs: 500 }))) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`sidecar admin never answered: ${stderr}`);
}

function setupNet(t: ExecutionContext): NetnsPair | undefined {
  if (netnsUnavailable()) {
    t.pass();
    return undefined;
  }
  const net = createNetnsPair();
  t.teardown(() => net.destroy());
  return net;
}

test.serial("admin access › from another host drain, quit and explain refuse with 403; loopback and the token are let in", async (t) => {
  const net = setupNet(t);
  if (!net) return;
  const policies = mkdtempSync(join(tmpdir(), "meshext-policies-"));
  t.teardown(() => rmSync(policies, { recursive: true, force: true }));
  await startInPod(t, net, ["sidecar", "--admin-listen=0.0.0.0:9902", "--grpc-listen=127.0.0.1:9001", `--policies=${policies}`, "--dataplane-tags=kuma.io/service=web"], {
    MESHEXT_ADMIN_TOKEN: "s3cret-token",
  });
  const remote = `http://${net.podIp}:9902`;
  const explain = { method: "POST", body: JSON.stringify({ path: "/" }) };

  // given a peer on another host, when it calls what drains or discloses, then 403
  for (const [method, path] of [["POST", "/drain"], ["GET", "/drain/prestop"], ["POST", "/quitquitquit"], ["GET", "/drain"], ["POST", "/explain"]] as const) {
    const r = await net.fetchFrom("peer", remote + path, { method, body: method === "POST" ? "{}" : undefined });
    t.is(statusOf(r), 403, `${method} ${path} from the peer`);
  }
  const wrongToken = await net.fetchFrom("peer", remote + "/explain", { ...explain, headers: { authorization: "Bearer s3cret-tokeN" } });
  t.is(statusOf(wrongToken), 403, "a wrong token is refused");
  // then nothing was drained
  const status = await net.fetchFrom("pod", "http://127.0.0.1:9902/drain");
  t.like(JSON.parse((status as { body: string }).body), { draining: false });

  // while /metrics and /ready answer the peer
  t.is(statusOf(await net.fetchFrom("peer", remote + "/metrics")), 200);
  t.is(statusOf(await net.fetchFrom("peer", remote + "/ready")), 200);
  // and loopback, or the peer with the token, may explain
  t.is(statusOf(await net.fetchFrom("pod", "http://127.0.0.1:9902/explain", explain)), 200);
  t.is(statusOf(await net.fetchFrom("peer", remote + "/explain", { ...explain, headers: { authorization: "Bearer s3cret-token" } })), 200);
  // the pod's own non-loopback address is not loopback either
  t.is(statusOf(await net.fetchFrom("pod", remote + "/explain", explain)), 403);
});

test.serial("admin access › the sidecar started with the args inject renders exposes nothing that drains or discloses to another host", async (t) => {
  const net = setupNet(t);
  if (!net) return;
  for (const mode of ["classic", "native"] as const) {
    const rendered = renderSidecar(settings(), mode).sidecar.args as string[];
    // The sidecar part of `meshext run FLAGS -- envoy`: the same flags, without Envoy (none runs here).
    // (meshext run's Envoy flags — the bootstrap's ports — are left out: `meshext sidecar` starts no Envoy.)
    const envoyFlag = (a: string) => ENVOY_FLAGS.some((f) => a === `--${f.flag}` || a.startsWith(`--${f.flag}=`));
    const args = ["sidecar", ...rendered.slice(1, rendered.indexOf("--")).filter((a) => !envoyFlag(a))];
    // The route table of a sidecar built from exactly these args (ports moved to 0 in this process only).
    const { config } = loadSidecarConfig([...args.slice(1), "--admin-listen=127.0.0.1:0", "--grpc-listen=127.0.0.1:0", "--probe-listen=127.0.0.1:0"], {});
    const local = await startSidecar(config, silentLogger());
    installDrain(local, config);
    const routes = local.admin.listRoutes();
    await local.stop(0);
    t.true(routes.length >= 8, `routes: ${routes.map((r) => r.path).join(" ")}`);

    const child = await startInPod(t, net, args, { MESHEXT_DATAPLANE_NAME: "web-0", MESHEXT_DATAPLANE_ADDRESS: net.podIp });
    const remote = `http://${net.podIp}:9902`;
    for (const r of routes) {
      const res = await net.fetchFrom("peer", remote + r.path, { method: r.method, body: r.method === "POST" ? "{}" : undefined, timeoutMs: 500 });
      if (r.access === "local") t.is(statusOf(res), 403, `${mode}: ${r.method} ${r.path} must refuse the peer`);
      else t.not(statusOf(res), 403, `${mode}: ${r.method} ${r.path} is public`);
    }
    t.deepEqual(
      routes.filter((r) => r.access === "public").map((r) => `${r.method} ${r.path}`).sort(),
      ["GET /drain/wait", "GET /metrics", "GET /ready"],
      "only read-only routes are public",
    );
    t.is(statusOf(await net.fetchFrom("peer", remote + "/metrics")), 200, "Prometheus can scrape from another host");
    t.regex((await net.fetchFrom("peer", remote + "/metrics") as { body: string }).body, /meshext_sidecar_draining 0/);
    // the ext_proc gRPC port is loopback-only: the peer cannot even connect
    t.is(statusOf(await net.fetchFrom("peer", `http://${net.podIp}:9001/`, { timeoutMs: 1000 })), "ECONNREFUSED");
    // and after all that the sidecar still serves, undrained
    const status = await net.fetchFrom("pod", "http://127.0.0.1:9902/drain");
    t.like(JSON.parse((status as { body: string }).body), { draining: false }, mode);
    t.is(child.exitCode, null);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
  }
});
