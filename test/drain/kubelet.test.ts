// A pod simulated with real parts, played as kubelet plays it, for both sidecar modes: a pod network
// namespace where the init container's `meshext redirect` installs the iptables redirection exactly as
// rendered, the sidecar container's `meshext run … -- envoy` started with exactly the args `meshext inject`
// renders (a real Envoy on the bootstrap meshext writes), the app, and kubelet and clients on another host.
// Start-up ordering (postStart / startupProbe), readiness through the rewritten probe on the probe port,
// traffic through the redirect and Envoy under the sample mTLS mesh and a policy that admits the pod's own namespace
// and denies another (403), preStop and SIGTERM in Kubernetes' order. Timings use --drain-time=4s and the default --grace-margin (5s): grace 9 s.
import test, { type ExecutionContext } from "ava";
import { execFileSync, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { renderSidecar, type RenderedSidecar, type SidecarMode } from "../../extproc/inject/render.js";
import { createNetnsPair, netnsUnavailable, type NetnsPair } from "../helpers/netns.js";
import { requireEnvoy } from "../helpers/real-envoy.js";
import { which } from "../helpers/tools.js";
import { settings } from "../inject/helpers.js";
import { CLI_PATH, watchProcess } from "./meshext-process.js";

const POD = fileURLToPath(new URL("./pod/", import.meta.url));
const APP_PORT = 8080;
const APP_DELAY_MS = 50;
/** The sample mesh: mTLS on, so a client no permission allows is denied. */
const MESH_MTLS = "type: Mesh\nname: default\nmtls: {enabledBackend: ca-1, backends: [{name: ca-1, type: builtin}]}\n";
/** Clients of the pod's namespace (shop) may call it; namespace `other` is denied outright. */
const SHOP_ONLY = `type: MeshTrafficPermission
name: shop-only
mesh: default
spec:
  targetRef: {kind: Mesh}
  rules:
    - default:
        allow: [{spiffeID: {type: Prefix, value: "spiffe://default.z1.mesh.local/ns/shop/sa"}}]
        deny: [{spiffeID: {type: Prefix, value: "spiffe://default.z1.mesh.local/ns/other/sa"}}]
`;
/** The workload identities of the two clients (URI SANs of their certificates, as Kuma's MeshIdentity issues them). */
const CLIENTS = { frontend: "spiffe://default.z1.mesh.local/ns/shop/sa/frontend", crawler: "spiffe://default.z1.mesh.local/ns/other/sa/crawler" };

type Line = Record<string, unknown> & { atMs?: number; receivedAtMs: number };
type Obj = Record<string, any>;

interface Proc {
  child: ChildProcess;
  lines: Line[];
  exited: Promise<number>;
  exitedAtMs?: number;
  stderr(): string;
}

function watch(child: ChildProcess): Proc {
  const watched = watchProcess(child);
  const proc: Proc = {
    child,
    lines: watched.lines,
    stderr: watched.stderr,
    exited: watched.exited.then((e) => {
      proc.exitedAtMs = e.atMs;
      return e.code ?? 128;
    }),
  };
  return proc;
}

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs a kubelet exec handler (hook or probe) inside the pod; resolves with its exit code. */
function execInPod(net: NetnsPair, command: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = watch(net.spawnInPod(command));
  let out = "";
  p.child.stdout!.on("data", (c: string) => (out += c));
  return p.exited.then((code) => ({ code, stdout: out, stderr: p.stderr() }));
}

interface Pod {
  net: NetnsPair;
  rendered: RenderedSidecar;
  graceSeconds: number;
  /** The sidecar container: `meshext run`, with the stand-in Envoy as its child. */
  sidecar: Proc;
  /** The real Envoy's output is the sidecar's (inherited stdio); what the drain did to it is in the sidecar's log. */
  envoy: { lines: Line[] };
  app: Proc;
  /** Requests from `frontend` (namespace shop, allowed) and from `crawler` (namespace other, denied). */
  load: Proc;
  denied: Proc;
}

/** Responses (and errors) a client got for requests that ended before `untilMs`. */
const endedBefore = (p: Proc, untilMs = Infinity) => p.lines.filter((l) => (l.atMs as number) < untilMs);
const statusOtherThan = (lines: Line[], status: number) => lines.filter((l) => l.status !== status);

/** Both clients stop; kubelet's test is over. */
async function stopClients(pod: Pod): Promise<void> {
  for (const p of [pod.load, pod.denied]) p.child.kill("SIGTERM");
  await Promise.all([pod.load.exited, pod.denied.exited]);
}

/** The policy held while the app was up: a 403 for every request of the other namespace. */
function assertDenied(t: ExecutionContext, pod: Pod, untilMs: number): void {
  const denied = endedBefore(pod.denied, untilMs);
  t.true(denied.length > 5, `the other namespace's client kept calling (${denied.length} requests)`);
  t.deepEqual(statusOtherThan(denied, 403), [], "every request of the other namespace got 403");
  t.log(`while the app was up: shop client ${endedBefore(pod.load, untilMs).length} requests, other namespace ${denied.length} (all 403)`);
}

async function startPod(t: ExecutionContext, mode: SidecarMode, appLingerMs: number, holdApp = false): Promise<Pod | undefined> {
  const missing = netnsUnavailable() ?? (which("iptables-restore") ? undefined : "no iptables-restore (Debian package iptables)") ?? (which("openssl") ? undefined : "no openssl (the mesh's certificates)");
  if (missing) {
    t.log(`skipped: ${missing}`);
    t.pass();
    return undefined;
  }
  const envoyBinary = requireEnvoy(t);
  if (!envoyBinary) return undefined;
  const net = createNetnsPair();
  const procs: Proc[] = [];
  const policies = mkdtempSync(join(tmpdir(), "meshext-pod-policies-"));
  writeFileSync(join(policies, "mesh.yaml"), MESH_MTLS);
  writeFileSync(join(policies, "shop-only.yaml"), SHOP_ONLY);
  // The mesh's CA, the pod's certificate (server.*) and one per client, as a mesh CA would issue them.
  const certs = mkdtempSync(join(tmpdir(), "meshext-pod-certs-"));
  execFileSync("bash", ["scripts/gen-test-certs.sh", certs, ...Object.entries(CLIENTS).map(([name, uri]) => `${name}=${uri}`)], { stdio: "ignore" });
  t.teardown(() => {
    for (const p of procs) p.child.kill("SIGKILL");
    net.destroy();
    for (const dir of [policies, certs]) rmSync(dir, { recursive: true, force: true });
  });
  const s = settings(["--drain-time=4s", `--sidecar-exec=${process.execPath} ${CLI_PATH}`]);
  // The pod as inject reads it: an app on 8080 with an HTTP readiness probe on /.
  const rendered = renderSidecar(s, mode, {
    tags: [["kuma.io/service", "web_shop_svc_8080"], ["k8s.kuma.io/namespace", "shop"]],
    inboundPorts: [APP_PORT],
    appPort: APP_PORT,
    probes: [{ kind: "http", port: APP_PORT, path: "/" }],
    virtualProbes: true,
  });
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MESHEXT_")));
  const start = (ns: "pod" | "peer", argv: string[], env: NodeJS.ProcessEnv = clean) => {
    const p = watch(net.spawnIn(ns, argv, env));
    procs.push(p);
    return p;
  };
  // 1. The init container, exactly as rendered (its command names meshext through --sidecar-exec).
  const init = await execInPod(net, [...(rendered.init.command as string[]), ...(rendered.init.args as string[])]);
  t.is(init.code, 0, `meshext-init: ${init.stderr}`);
  // 2. The sidecar container: `meshext run FLAGS -- envoy`, envoy found on PATH as in the image; the policy source,
  //    the pod's identity and its certificate come from the environment, as a ContainerPatch mounting a Secret would give them.
  const args = rendered.sidecar.args as string[];
  t.deepEqual(args.slice(args.indexOf("--")), ["--", "envoy"]);
  const sidecar = start("pod", [process.execPath, CLI_PATH, ...args], {
    ...clean,
    PATH: `${dirname(envoyBinary.path)}:${clean.PATH ?? ""}`,
    MESHEXT_DATAPLANE_NAME: "web-0",
    MESHEXT_DATAPLANE_ADDRESS: net.podIp,
    MESHEXT_POLICIES: policies,
    MESHEXT_TLS_CERT: join(certs, "server.crt"),
    MESHEXT_TLS_KEY: join(certs, "server.key"),
    MESHEXT_TLS_CA: join(certs, "ca.crt"),
  });
  const envoy = { get lines() { return sidecar.lines.filter((l) => l.envoy !== undefined); } };
  // The app starts only once the sidecar's startup gate passes: native = startupProbe (exec, every
  // periodSeconds until success), classic = postStart (exec, runs to completion before the next container).
  const c = rendered.sidecar as Obj;
  if (mode === "native") {
    const probe = () => execInPod(net, c.startupProbe.exec.command).then((r) => (r.code === 0 ? true : undefined));
    await until("the startupProbe to succeed", probe, 30_000).catch((err: Error) => {
      throw new Error(`${err.message}; the sidecar said: ${sidecar.stderr().slice(-2000)} ${JSON.stringify(sidecar.lines.slice(-5))}`);
    });
  } else {
    const post = await execInPod(net, c.lifecycle.postStart.exec.command);
    t.is(post.code, 0, `postStart wait-ready: ${post.stderr}`);
  }
  // 3. The app, on every address (kubelet probes the pod IP); only the redirect and Envoy stand before it.
  const app = start("pod", [process.execPath, POD + "app-process.js", String(APP_PORT), String(APP_DELAY_MS), String(appLingerMs), "0.0.0.0", ...(holdApp ? ["hold"] : [])]);
  await until("the app", () => app.lines.find((l) => l.app === "started"));
  // kubelet's readiness probe, rewritten to the probe port, reaches the app from the node (here: the peer).
  const probe = await net.fetchFrom("peer", `http://${net.podIp}:${s.probePort}/${APP_PORT}/`);
  t.like(probe, { status: 200 }, "the app's rewritten readiness probe passes through the probe port");
  t.like(await net.fetchFrom("peer", `http://${net.podIp}:${s.probePort}/${APP_PORT}/admin`), { status: 404 }, "only declared probes are forwarded");
  // Prometheus on the node scrapes Envoy's stats listener; nothing else of Envoy's admin answers there.
  const stats = await net.fetchFrom("peer", `http://${net.podIp}:${s.statsPort}/stats/prometheus`);
  t.like(stats, { status: 200 });
  if ("body" in stats) t.regex(stats.body, /envoy_server_live/);
  const quit = await net.fetchFrom("peer", `http://${net.podIp}:${s.statsPort}/quitquitquit`, { method: "POST" });
  t.false("status" in quit && quit.status === 200, "the stats listener is not Envoy's admin");
  // Clients on another host call the app's port over mTLS: the redirect sends them to Envoy, which asks the sidecar.
  // frontend (namespace shop) is allowed, crawler (namespace other) is denied by the policy.
  const client = (name: keyof typeof CLIENTS, loops: number) => start("peer", [process.execPath, POD + "load-process.js", `https://${net.podIp}:${APP_PORT}/`, String(loops), certs, name]);
  const load = client("frontend", 2);
  const denied = client("crawler", 1);
  await until("traffic flowing", () => (load.lines.filter((l) => l.status === 200).length >= 20 && denied.lines.length >= 10 ? true : undefined), 20_000);
  t.deepEqual(statusOtherThan(load.lines, 200), [], "all of the shop client's requests succeed before termination");
  t.deepEqual(statusOtherThan(denied.lines, 403), [], "the other namespace's client is denied by the policy");
  return { net, rendered, graceSeconds: rendered.terminationGracePeriodSeconds, sidecar, envoy, app, load, denied };
}

function sidecarLine(p: Proc, pred: (l: Line) => boolean): Line | undefined {
  return p.lines.find(pred);
}

// The sidecar exits 0, or 139 when Envoy 1.40.0 crashed while stopping after meshext had stopped it at the end
// (docs/envoy-fidelity.md, "Stopping Envoy"): that crash is logged for the reader, never hidden, and only
// accepted with Envoy's own backtrace on stderr and meshext's stop_envoy step logged before it.
function expectSidecarExit(t: ExecutionContext, sidecar: Proc, code: number | null): void {
  const envoyCrashedAtExit = code === 139 && /\[critical\]\[backtrace\]/.test(sidecar.stderr()) && sidecarLine(sidecar, (l) => l.step === "stop_envoy") !== undefined;
  if (envoyCrashedAtExit) t.log(`KNOWN ENVOY CRASH: Envoy died of SIGSEGV while shutting down after the drain (exit 139): ${sidecar.stderr().slice(-600)}`);
  else t.is(code, 0, `sidecar exit ${code}: ${sidecar.stderr().slice(-3000)} ${JSON.stringify(sidecar.lines.slice(-8))}`);
}

test.serial("kubelet › native: preStop enters drain-forever, the app is served until it exits, the sidecar exits within 1 s of its SIGTERM", async (t) => {
  // An app with a slow shutdown: at least 7 s, and held until the checks below have run while it was up (an exec
  // hook's node start took 7.5 s on a loaded machine, longer than any fixed linger we would pick)
  const APP_LINGER_MS = 7000;
  const pod = await startPod(t, "native", APP_LINGER_MS, true);
  if (!pod) return;
  const { net, sidecar, app } = pod;
  const hook = (pod.rendered.sidecar as Obj).lifecycle.preStop.exec.command as string[];

  // t0: the pod is deleted. kubelet runs the sidecars' preStop and, at the same time, stops the app.
  const t0 = Date.now();
  const preStop = execInPod(net, hook);
  app.child.kill("SIGTERM");
  // Once the app has exited, kubelet SIGTERMs the sidecar container; meshext stops its Envoy and exits.
  let sigtermSidecarMs = 0;
  const sidecarsStopped = app.exited.then(async () => {
    sigtermSidecarMs = Date.now();
    sidecar.child.kill("SIGTERM");
    return sidecar.exited;
  });
  const hookResult = await preStop;
  const hookDoneMs = Date.now();
  t.is(hookResult.code, 0, hookResult.stderr);
  t.log(`native preStop exec took ${hookDoneMs - t0} ms (a node process start)`);

  // drain-forever entered at preStop: Envoy health checks failed, inbound listeners draining for good
  const skipExit = await until("drain_listeners", () => sidecarLine(sidecar, (l) => l.step === "envoy_drain_listeners_forever"));
  t.truthy(sidecarLine(sidecar, (l) => l.step === "envoy_healthcheck_fail"));
  t.true(skipExit.receivedAtMs - hookDoneMs < 1000, `drain-forever ${skipExit.receivedAtMs - hookDoneMs} ms after the preStop returned`);
  t.truthy(sidecarLine(sidecar, (l) => l.step === "start" && l.mode === "forever" && l.trigger === "admin POST /drain"), "entered through the hook");
  const status = await net.fetchFrom("pod", "http://127.0.0.1:9902/drain");
  t.like(status, { status: 200 }, "the sidecar still runs while the app shuts down");
  if ("body" in status) t.like(JSON.parse(status.body), { draining: true, deadline: null });
  t.is(app.exitedAtMs, undefined, "all of this while the app is still shutting down");
  app.child.kill("SIGUSR1"); // the app may exit once its linger is over

  // The app finishes on its own time, then the sidecar stops.
  const code = await sidecarsStopped;
  // meshext stopped Envoy's inbound listeners and let its requests in flight end before the SIGTERM, which makes
  // Envoy 1.40.0's crash at shutdown with ext_proc streams open rare (docs/envoy-fidelity.md, "Stopping Envoy") but
  // not impossible: CI still met it once (exit 139 with Envoy's backtrace, after every request was served). Such a
  // crash is reported here, not hidden, and everything else below is still checked.
  t.truthy(sidecarLine(sidecar, (l) => l.msg === "envoy quiesced: inbound listeners stopped, stopping it"), "Envoy was quiesced before its SIGTERM");
  expectSidecarExit(t, sidecar, code);
  const appExitMs = app.exitedAtMs!;
  const sidecarExitMs = sidecar.exitedAtMs!;
  const totalMs = sidecarExitMs - t0; // the pod is gone once its last container has exited
  await stopClients(pod);

  t.true(sidecarExitMs - sigtermSidecarMs <= 1000, `sidecar exit ${sidecarExitMs - sigtermSidecarMs} ms after its SIGTERM`);
  t.true(appExitMs - t0 >= APP_LINGER_MS - 100, "the app ran its full shutdown");
  // The app was served until it exited: every allowed request answered before it exited got a 200, every denied one a 403.
  const beforeAppExit = endedBefore(pod.load, appExitMs - APP_DELAY_MS);
  t.true(beforeAppExit.length > 20);
  t.deepEqual(statusOtherThan(beforeAppExit, 200), [], "allowed requests failed while the app was still up");
  assertDenied(t, pod, appExitMs - APP_DELAY_MS);
  t.truthy(sidecarLine(sidecar, (l) => l.step === "wait" && l.reason === "signal"), "drain-forever ended by the SIGTERM");
  t.truthy(sidecarLine(sidecar, (l) => l.step === "control_plane_deregister"), "deregistered on the way out");
  t.true(totalMs <= pod.graceSeconds * 1000, `total ${totalMs} ms ≤ terminationGracePeriodSeconds ${pod.graceSeconds} s`);
  t.log(`native: preStop→drain-forever ${skipExit.receivedAtMs - t0} ms, app exit ${appExitMs - t0} ms, sidecar exit ${sidecarExitMs - sigtermSidecarMs} ms after SIGTERM, total ${totalMs} ms`);
});

test.serial("kubelet › classic: preStop drains (exec on loopback), SIGTERM follows the hook, meshext stops Envoy after the drain, all within the grace period", async (t) => {
  const APP_LINGER_MS = 5000; // the app outlives the 4 s drain, as the docs advise for classic sidecars
  const pod = await startPod(t, "classic", APP_LINGER_MS);
  if (!pod) return;
  const { net, sidecar, app } = pod;
  const sidecarHook = (pod.rendered.sidecar as Obj).lifecycle.preStop.exec.command as string[];

  // t0: every container's preStop runs at once; the app has none, so it gets SIGTERM now.
  const t0 = Date.now();
  const sidecarPreStop = execInPod(net, sidecarHook).then((r) => ({ ...r, atMs: Date.now() }));
  app.child.kill("SIGTERM");

  const started = await until("the drain", () => sidecarLine(sidecar, (l) => l.step === "start"));
  t.is(started.mode, "drain");
  t.is(started.trigger, "admin POST /drain", "started by the preStop hook, before any SIGTERM");
  const sidecarDone = await sidecarPreStop;
  t.is(sidecarDone.code, 0, sidecarDone.stderr);
  sidecar.child.kill("SIGTERM"); // after its preStop returned
  expectSidecarExit(t, sidecar, await sidecar.exited);
  await app.exited;
  const totalMs = Math.max(sidecar.exitedAtMs!, app.exitedAtMs!) - t0;
  t.log(`classic: hook returned ${sidecarDone.atMs - t0} ms; exits: sidecar ${sidecar.exitedAtMs! - t0}, app ${app.exitedAtMs! - t0} ms`);
  await stopClients(pod);

  const drainedMs = sidecarLine(sidecar, (l) => l.step === "control_plane_deregister")!.receivedAtMs;
  t.true(sidecar.exitedAtMs! >= drainedMs, "Envoy (meshext's child) was stopped only after the drain");
  // Classic mode does not tie the drain to the app's exit: requests succeed while both the app and
  // the draining Envoy are up (docs/drain.md, "Choosing a mode").
  const servedUntilMs = Math.min(drainedMs, app.exitedAtMs!) - APP_DELAY_MS;
  const whileServing = endedBefore(pod.load, servedUntilMs);
  t.true(whileServing.length > 20);
  t.deepEqual(statusOtherThan(whileServing, 200), [], "no allowed request failed while the sidecar drained and the app was up");
  assertDenied(t, pod, servedUntilMs);
  t.true(totalMs <= pod.graceSeconds * 1000, `total ${totalMs} ms ≤ terminationGracePeriodSeconds ${pod.graceSeconds} s`);
  t.log(`classic: drain started ${started.receivedAtMs - t0} ms, complete ${drainedMs - t0} ms, total ${totalMs} ms`);
});

test.serial("kubelet › classic Job: the app's POST /quitquitquit on loopback ends the sidecar and its Envoy, so the pod completes", async (t) => {
  const pod = await startPod(t, "classic", 0);
  if (!pod) return;
  const { net, sidecar, app } = pod;
  await stopClients(pod);
  app.child.kill("SIGTERM"); // the Job's work is done
  await app.exited;
  const t0 = Date.now();
  const r = await net.fetchFrom("pod", "http://127.0.0.1:9902/quitquitquit", { method: "POST" });
  t.like(r, { status: 202 });
  expectSidecarExit(t, sidecar, await sidecar.exited);
  t.truthy(sidecarLine(sidecar, (l) => l.step !== undefined || l.msg !== undefined), "the sidecar logged its way out");
  t.true(sidecar.exitedAtMs! - t0 < 3000, "the sidecar container (and its Envoy) exits promptly");
});

test.serial("kubelet › native Job: the app completes on its own, kubelet SIGTERMs the sidecar, it exits within 1 s and the pod completes", async (t) => {
  const pod = await startPod(t, "native", 0);
  if (!pod) return;
  const { sidecar, app } = pod;
  t.true((pod.rendered.sidecar.args as string[]).includes("--exit-on-sigterm"));
  await stopClients(pod);
  app.child.kill("SIGTERM"); // stands in for the Job's work finishing: the app container exits 0
  t.is(await app.exited, 0);
  const sigtermMs = Date.now();
  sidecar.child.kill("SIGTERM");
  t.is(await sidecar.exited, 0);
  t.true(sidecar.exitedAtMs! - sigtermMs <= 1000, `sidecar exit ${sidecar.exitedAtMs! - sigtermMs} ms after its SIGTERM`);
  t.truthy(sidecar.lines.find((l) => l.step === "start" && l.mode === "exit"), "no timed drain for a finished app");
  t.falsy(sidecarLine(sidecar, (l) => l.step === "envoy_healthcheck_fail" && l.outcome !== "skipped"), "Envoy is not drained either");
});
