// Pod termination played as kubelet plays it, for both sidecar modes, with real processes in a pod
// network namespace: the meshext sidecar started with the args `meshext inject` renders, a stand-in
// Envoy proxying to the app and counting requests in flight, the app, and clients on another host.
// Hooks run exactly as rendered (exec inside the pod, httpGet from the node to the pod IP), and
// SIGTERMs come in Kubernetes' order. Timings use --drain-time=4s and the default --grace-margin (5s): grace 9 s.
import test, { type ExecutionContext } from "ava";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { renderSidecar, type RenderedSidecar, type SidecarMode } from "../../extproc/inject/render.js";
import { createNetnsPair, netnsUnavailable, type NetnsPair } from "../helpers/netns.js";
import { settings } from "../inject/helpers.js";
import { CLI_PATH, watchProcess } from "./meshext-process.js";

const POD = fileURLToPath(new URL("./pod/", import.meta.url));
const APP_PORT = 8080;
const ENVOY_INBOUND_PORT = 15006;
const ENVOY_ADMIN_PORT = 9901;
const APP_DELAY_MS = 50;

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

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
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
  sidecar: Proc;
  envoy: Proc;
  app: Proc;
  load: Proc;
}

async function startPod(t: ExecutionContext, mode: SidecarMode, appLingerMs: number): Promise<Pod | undefined> {
  if (netnsUnavailable()) {
    t.log(`skipped: ${netnsUnavailable()}`);
    t.pass();
    return undefined;
  }
  const net = createNetnsPair();
  const procs: Proc[] = [];
  t.teardown(() => {
    for (const p of procs) p.child.kill("SIGKILL");
    net.destroy();
  });
  const s = settings(["--drain-time=4s", `--sidecar-exec=${process.execPath} ${CLI_PATH}`]);
  const rendered = renderSidecar(s, mode);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MESHEXT_")));
  const start = (ns: "pod" | "peer", argv: string[], env: NodeJS.ProcessEnv = clean) => {
    const p = watch(net.spawnIn(ns, argv, env));
    procs.push(p);
    return p;
  };
  // Start order as kubelet: (meshext-init skipped: no iptables here) Envoy, then the meshext sidecar.
  const envoy = start("pod", [process.execPath, POD + "stand-in-envoy-process.js", String(ENVOY_INBOUND_PORT), String(APP_PORT), String(ENVOY_ADMIN_PORT)]);
  await until("the stand-in Envoy", () => envoy.lines.find((l) => l.envoy === "started"));
  const sidecar = start("pod", [process.execPath, CLI_PATH, ...(rendered.sidecar.args as string[])], {
    ...clean,
    MESHEXT_DATAPLANE_NAME: "web-0",
    MESHEXT_DATAPLANE_ADDRESS: net.podIp,
  });
  // The app starts only once the sidecar's startup gate passes: native = startupProbe (exec, every
  // periodSeconds until success), classic = postStart (exec, runs to completion before the next container).
  const c = rendered.sidecar as Obj;
  if (mode === "native") {
    await until("the startupProbe to succeed", async () => ((await execInPod(net, c.startupProbe.exec.command)).code === 0 ? true : undefined), 15_000);
  } else {
    const post = await execInPod(net, c.lifecycle.postStart.exec.command);
    t.is(post.code, 0, `postStart wait-ready: ${post.stderr}`);
  }
  const app = start("pod", [process.execPath, POD + "app-process.js", String(APP_PORT), String(APP_DELAY_MS), String(appLingerMs)]);
  await until("the app", () => app.lines.find((l) => l.app === "started"));
  const load = start("peer", [process.execPath, POD + "load-process.js", `http://${net.podIp}:${ENVOY_INBOUND_PORT}/`, "2"]);
  await until("traffic flowing", () => (load.lines.filter((l) => l.status === 200).length >= 20 ? true : undefined));
  t.true(load.lines.every((l) => l.status === 200), "all requests succeed before termination");
  return { net, rendered, graceSeconds: rendered.terminationGracePeriodSeconds, sidecar, envoy, app, load };
}

function sidecarLine(p: Proc, pred: (l: Line) => boolean): Line | undefined {
  return p.lines.find(pred);
}

test.serial("kubelet › native: preStop enters drain-forever, the app is served until it exits, the sidecar exits within 1 s of its SIGTERM", async (t) => {
  const APP_LINGER_MS = 6000; // an app with a slow shutdown; exec hooks start slowly on a loaded machine
  const pod = await startPod(t, "native", APP_LINGER_MS);
  if (!pod) return;
  const { net, sidecar, envoy, app, load } = pod;
  const hook = (pod.rendered.sidecar as Obj).lifecycle.preStop.exec.command as string[];
  t.is((pod.rendered.envoy as Obj).lifecycle, undefined, "native Envoy has no preStop: the sidecar's drains it");

  // t0: the pod is deleted. kubelet runs the sidecars' preStop and, at the same time, stops the app.
  const t0 = Date.now();
  const preStop = execInPod(net, hook);
  app.child.kill("SIGTERM");
  // Once the app has exited, kubelet SIGTERMs the sidecars in reverse start order: meshext, then Envoy.
  let sigtermSidecarMs = 0;
  const sidecarsStopped = app.exited.then(async () => {
    sigtermSidecarMs = Date.now();
    sidecar.child.kill("SIGTERM");
    const code = await sidecar.exited;
    envoy.child.kill("SIGTERM");
    await envoy.exited;
    return code;
  });
  const hookResult = await preStop;
  const hookDoneMs = Date.now();
  t.is(hookResult.code, 0, hookResult.stderr);
  t.log(`native preStop exec took ${hookDoneMs - t0} ms (a node process start)`);

  // drain-forever entered at preStop: Envoy health checks failed, inbound listeners draining for good
  const skipExit = await until("drain_listeners", () => envoy.lines.find((l) => l.url === "/drain_listeners?inboundonly&graceful&skip_exit"));
  t.truthy(envoy.lines.find((l) => l.url === "/healthcheck/fail"));
  t.true((skipExit.atMs as number) - hookDoneMs < 1000, `drain-forever ${(skipExit.atMs as number) - hookDoneMs} ms after the preStop returned`);
  t.truthy(sidecarLine(sidecar, (l) => l.step === "start" && l.mode === "forever" && l.trigger === "admin POST /drain"), "entered through the hook");
  const status = await net.fetchFrom("pod", "http://127.0.0.1:9902/drain");
  t.like(status, { status: 200 }, "the sidecar still runs while the app shuts down");
  if ("body" in status) t.like(JSON.parse(status.body), { draining: true, deadline: null });
  t.is(app.exitedAtMs, undefined, "all of this while the app is still shutting down");

  // The app finishes on its own time, then the sidecars stop.
  t.is(await sidecarsStopped, 0);
  const appExitMs = app.exitedAtMs!;
  const sidecarExitMs = sidecar.exitedAtMs!;
  const totalMs = envoy.exitedAtMs! - t0; // the pod is gone once its last container has exited
  load.child.kill("SIGTERM");
  await load.exited;

  t.true(sidecarExitMs - sigtermSidecarMs <= 1000, `sidecar exit ${sidecarExitMs - sigtermSidecarMs} ms after its SIGTERM`);
  t.true(appExitMs - t0 >= APP_LINGER_MS - 100, "the app ran its full shutdown");
  // The app was served until it exited: every request answered before it exited got a 200.
  const beforeAppExit = load.lines.filter((l) => (l.atMs as number) < appExitMs - APP_DELAY_MS);
  t.true(beforeAppExit.length > 20);
  t.deepEqual(beforeAppExit.filter((l) => l.status !== 200), [], "requests failed while the app was still up");
  t.truthy(sidecarLine(sidecar, (l) => l.step === "wait" && l.reason === "signal"), "drain-forever ended by the SIGTERM");
  t.truthy(sidecarLine(sidecar, (l) => l.step === "control_plane_deregister"), "deregistered on the way out");
  t.true(totalMs <= pod.graceSeconds * 1000, `total ${totalMs} ms ≤ terminationGracePeriodSeconds ${pod.graceSeconds} s`);
  t.log(`native: preStop→drain-forever ${(skipExit.atMs as number) - t0} ms, app exit ${appExitMs - t0} ms, sidecar exit ${sidecarExitMs - sigtermSidecarMs} ms after SIGTERM, total ${totalMs} ms`);
});

test.serial("kubelet › classic: preStop drains (exec on loopback), Envoy's preStop waits for it, SIGTERMs follow each hook, all within the grace period", async (t) => {
  const APP_LINGER_MS = 5000; // the app outlives the 4 s drain, as the docs advise for classic sidecars
  const pod = await startPod(t, "classic", APP_LINGER_MS);
  if (!pod) return;
  const { net, sidecar, envoy, app, load } = pod;
  const sidecarHook = (pod.rendered.sidecar as Obj).lifecycle.preStop.exec.command as string[];
  const envoyHook = (pod.rendered.envoy as Obj).lifecycle.preStop.httpGet as { path: string; port: number };

  // t0: every container's preStop runs at once; the app has none, so it gets SIGTERM now.
  const t0 = Date.now();
  const sidecarPreStop = execInPod(net, sidecarHook).then((r) => ({ ...r, atMs: Date.now() }));
  // kubelet's httpGet reaches the pod IP from the node: here, from the other namespace.
  const envoyPreStop = net.fetchFrom("peer", `http://${net.podIp}:${envoyHook.port}${envoyHook.path}`, { timeoutMs: pod.graceSeconds * 1000 }).then((r) => ({ r, atMs: Date.now() }));
  app.child.kill("SIGTERM");

  const started = await until("the drain", () => sidecarLine(sidecar, (l) => l.step === "start"));
  t.is(started.mode, "drain");
  t.is(started.trigger, "admin POST /drain", "started by the preStop hook, before any SIGTERM");
  const envoyDone = await envoyPreStop;
  t.like(envoyDone.r, { status: 200 }, "Envoy's hook answers once drained");
  const envoyHookMs = "atMs" in envoyDone.r ? envoyDone.r.atMs : envoyDone.atMs;
  const sigtermEnvoyMs = Date.now();
  envoy.child.kill("SIGTERM"); // after its preStop returned
  const sidecarDone = await sidecarPreStop;
  t.is(sidecarDone.code, 0, sidecarDone.stderr);
  sidecar.child.kill("SIGTERM"); // after its preStop returned
  t.is(await sidecar.exited, 0);
  await envoy.exited;
  await app.exited;
  // The pod's timeline: when its last container exited, counting Envoy as exiting when its preStop
  // answered (it exits at once on SIGTERM, checked below; this harness's own process spawning under
  // load is not part of the pod's time).
  t.true(envoy.exitedAtMs! - sigtermEnvoyMs < 1000, "Envoy exits at once on its SIGTERM");
  const totalMs = Math.max(sidecar.exitedAtMs!, envoyHookMs, app.exitedAtMs!) - t0;
  t.log(`classic: hooks returned sidecar ${sidecarDone.atMs - t0} ms, Envoy ${envoyHookMs - t0} ms; exits: sidecar ${sidecar.exitedAtMs! - t0}, Envoy ${envoy.exitedAtMs! - t0}, app ${app.exitedAtMs! - t0} ms`);
  load.child.kill("SIGTERM");
  await load.exited;

  const drainedMs = sidecarLine(sidecar, (l) => l.step === "control_plane_deregister")!.receivedAtMs;
  t.true(envoy.exitedAtMs! >= drainedMs, "Envoy got SIGTERM only after the drain");
  // Classic mode does not tie the drain to the app's exit: requests succeed while both the app and
  // the draining Envoy are up (docs/drain.md, "Choosing a mode").
  const servedUntilMs = Math.min(drainedMs, app.exitedAtMs!) - APP_DELAY_MS;
  const whileServing = load.lines.filter((l) => (l.atMs as number) < servedUntilMs);
  t.true(whileServing.length > 20);
  t.deepEqual(whileServing.filter((l) => l.status !== 200), [], "no request failed while the sidecar drained and the app was up");
  t.true(totalMs <= pod.graceSeconds * 1000, `total ${totalMs} ms ≤ terminationGracePeriodSeconds ${pod.graceSeconds} s`);
  t.log(`classic: drain started ${started.receivedAtMs - t0} ms, complete ${drainedMs - t0} ms, Envoy exit ${envoy.exitedAtMs! - t0} ms, total ${totalMs} ms`);
});

test.serial("kubelet › classic Job: the app's POST /quitquitquit on loopback ends the sidecar and Envoy, so the pod completes", async (t) => {
  const pod = await startPod(t, "classic", 0);
  if (!pod) return;
  const { net, sidecar, envoy, app, load } = pod;
  load.child.kill("SIGTERM");
  await load.exited;
  app.child.kill("SIGTERM"); // the Job's work is done
  await app.exited;
  const t0 = Date.now();
  const r = await net.fetchFrom("pod", "http://127.0.0.1:9902/quitquitquit", { method: "POST" });
  t.like(r, { status: 202 });
  t.is(await sidecar.exited, 0);
  await envoy.exited;
  t.truthy(envoy.lines.find((l) => l.envoy === "quitquitquit"), "Envoy was told to quit");
  t.true(Math.max(sidecar.exitedAtMs!, envoy.exitedAtMs!) - t0 < 3000, "both exit promptly");
});

test.serial("kubelet › native Job: the app completes on its own, kubelet SIGTERMs the sidecars, they exit within 1 s and the pod completes", async (t) => {
  const pod = await startPod(t, "native", 0);
  if (!pod) return;
  const { sidecar, envoy, app, load } = pod;
  t.true((pod.rendered.sidecar.args as string[]).includes("--exit-on-sigterm"));
  load.child.kill("SIGTERM");
  await load.exited;
  app.child.kill("SIGTERM"); // stands in for the Job's work finishing: the app container exits 0
  t.is(await app.exited, 0);
  const sigtermMs = Date.now();
  sidecar.child.kill("SIGTERM");
  t.is(await sidecar.exited, 0);
  envoy.child.kill("SIGTERM");
  await envoy.exited;
  t.true(sidecar.exitedAtMs! - sigtermMs <= 1000, `sidecar exit ${sidecar.exitedAtMs! - sigtermMs} ms after its SIGTERM`);
  t.truthy(sidecar.lines.find((l) => l.step === "start" && l.mode === "exit"), "no timed drain for a finished app");
  t.falsy(envoy.lines.find((l) => l.url === "/healthcheck/fail"), "Envoy is not drained either");
});
