// The real `meshext sidecar` / `meshext run` processes, driven with real signals, next to a
// stand-in Envoy admin: the "done when" end to end. Serial: each test measures timings of its own process.
import test, { type ExecutionContext } from "ava";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";
import { FakeControlPlane } from "./fake-control-plane.js";
import { adminUrl, FAKE_ENVOY_PATH, processGone, spawnMeshext, type MeshextProcess } from "./meshext-process.js";

const MIN_MS = 300;
const DEADLINE_MS = 3000;

async function start(t: ExecutionContext, command: "sidecar" | "run", extra: string[] = [], envoyArgs: string[] = []) {
  const envoy = await FakeEnvoyAdmin.start();
  const args = [
    command,
    "--grpc-listen",
    "127.0.0.1:0",
    "--admin-listen",
    "127.0.0.1:0",
    "--envoy-admin",
    envoy.url,
    "--drain-min",
    `${MIN_MS}ms`,
    "--drain-time",
    `${DEADLINE_MS}ms`,
    ...extra,
  ];
  if (command === "run") args.push("--", process.execPath, FAKE_ENVOY_PATH, "-c", "its-own-bootstrap.yaml", ...envoyArgs);
  const p = spawnMeshext(args);
  t.teardown(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await envoy.close();
  });
  const admin = await adminUrl(p);
  return { envoy, p, admin };
}

/** Polls url until pred(status, body) holds; returns ms taken. */
async function until(url: string, pred: (status: number, body: string) => boolean, timeoutMs = 2000): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const res = await fetch(url).catch(() => undefined);
    if (res && pred(res.status, await res.text())) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${url}: condition not met within ${timeoutMs}ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function steps(p: MeshextProcess): string[] {
  return p.lines.filter((l) => l.component === "drain" && typeof l.step === "string").map((l) => `${l.step}:${String(l.outcome ?? "")}`);
}

test.serial("drain › sidecar process: SIGTERM fails Envoy health checks, flips /drain and /ready at once, exits 0 between min and deadline", async (t) => {
  const { envoy, p, admin } = await start(t, "sidecar");
  envoy.downstreamRqActive = 1;
  t.is((await fetch(`${admin}/ready`)).status, 200);
  const sentAt = Date.now();
  p.child.kill("SIGTERM");
  setTimeout(() => (envoy.downstreamRqActive = 0), 1000);

  const drainMs = await until(`${admin}/drain`, (_, body) => (JSON.parse(body) as { draining: boolean }).draining);
  const readyMs = await until(`${admin}/ready`, (status) => status === 503);
  t.true(drainMs < 2000 && readyMs < 2000, `/drain after ${drainMs}ms, /ready after ${readyMs}ms`);

  const exit = await p.exited;
  const exitMs = exit.atMs - sentAt;
  t.is(exit.code, 0, p.stderr());
  t.true(exitMs >= 1000 && exitMs < DEADLINE_MS + 1500, `exited after ${exitMs}ms: when in-flight hit 0, before the deadline`);
  const hcFail = envoy.firstCall("POST", "/healthcheck/fail");
  t.truthy(hcFail, "Envoy was told to fail health checks");
  t.true(hcFail!.atMs - sentAt < 1000, `healthcheck/fail after ${hcFail!.atMs - sentAt}ms`);
  t.true(envoy.calls.filter((c) => c.path === "/stats").every((c) => c.atMs >= sentAt + MIN_MS - 20), "no early-exit poll before the minimum");
  t.deepEqual(steps(p), [
    "start:",
    "ready_503_health_not_serving:ok",
    "envoy_healthcheck_fail:ok",
    "control_plane_draining:skipped",
    "wait:",
    "control_plane_deregister:skipped",
    "stop_envoy:skipped",
    "close_servers:ok",
    "exit:",
  ]);
  t.like(p.lines.find((l) => l.step === "wait"), { reason: "no requests in flight" });
});

test.serial("drain › sidecar process: a second SIGTERM cuts the wait short and still exits 0", async (t) => {
  const { envoy, p } = await start(t, "sidecar", ["--drain-time", "20s"]);
  envoy.downstreamRqActive = 5;
  p.child.kill("SIGTERM");
  await p.waitForLine((l) => l.step === "envoy_healthcheck_fail");
  const secondAt = Date.now();
  p.child.kill("SIGTERM");
  const exit = await p.exited;
  t.is(exit.code, 0, p.stderr());
  t.true(exit.atMs - secondAt < 2500, `exited ${exit.atMs - secondAt}ms after the second signal (deadline was 20s)`);
  t.like(p.lines.find((l) => l.step === "wait"), { reason: "signal" });
});

test.serial("drain › sidecar process: POST /drain?wait=true answers after completion, then the process exits 0", async (t) => {
  const { envoy, p, admin } = await start(t, "sidecar");
  const t0 = Date.now();
  const res = await fetch(`${admin}/drain?wait=true`, { method: "POST" });
  const answeredMs = Date.now() - t0;
  t.is(res.status, 200);
  t.like(await res.json(), { draining: true });
  t.true(answeredMs >= MIN_MS - 50, `answered after ${answeredMs}ms`);
  t.truthy(p.lines.find((l) => l.step === "control_plane_deregister"), "deregistered before the answer");
  t.truthy(envoy.firstCall("POST", "/healthcheck/fail"));
  t.is((await p.exited).code, 0, p.stderr());
});

test.serial("drain › run: Envoy gets SIGTERM only after the drain, and meshext exits with Envoy's status", async (t) => {
  const { envoy, p } = await start(t, "run", [], ["--exit-code", "3"]);
  await p.waitForLine((l) => l.fakeEnvoy === "started");
  const sentAt = Date.now();
  p.child.kill("SIGTERM");
  const exit = await p.exited;
  t.is(exit.code, 3, "Envoy's exit status");
  const envoyTerm = p.lines.find((l) => l.fakeEnvoy === "SIGTERM");
  t.truthy(envoyTerm, "Envoy got SIGTERM");
  const hcFail = envoy.firstCall("POST", "/healthcheck/fail")!;
  t.true(hcFail.atMs < envoyTerm!.atMs!, "healthcheck/fail before Envoy's SIGTERM");
  t.true(envoyTerm!.atMs! - sentAt >= MIN_MS - 50, `Envoy got SIGTERM ${envoyTerm!.atMs! - sentAt}ms after ours: after the minimum drain`);
  t.is(p.lines.filter((l) => l.fakeEnvoy === "SIGTERM").length, 1, "our SIGTERM was not forwarded straight to Envoy");
});

test.serial("drain › run: a third signal exits at once and kills an Envoy that ignores SIGTERM", async (t) => {
  const { p } = await start(t, "run", ["--envoy-kill-grace", "30s"], ["--ignore-sigterm"]);
  const started = await p.waitForLine((l) => l.fakeEnvoy === "started");
  p.child.kill("SIGTERM");
  // the drain reaches "stop Envoy"; Envoy ignores the SIGTERM and the 30s kill grace starts
  await p.waitForLine((l) => l.fakeEnvoy === "SIGTERM");
  // one at a time: the kernel merges a signal sent while the same one is still pending
  p.child.kill("SIGTERM");
  await p.waitForLine((l) => l.count === 2);
  const thirdAt = Date.now();
  p.child.kill("SIGTERM");
  const exit = await p.exited;
  t.is(exit.code, 1, "forced exit code");
  t.true(exit.atMs - thirdAt < 1500, `exited ${exit.atMs - thirdAt}ms after the third signal`);
  const pid = started.pid as number;
  const t0 = Date.now();
  while (!processGone(pid) && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 50));
  t.true(processGone(pid), "Envoy is not left behind");
});

test.serial("drain › run: when the Envoy command does not exist, meshext says so in one line and exits 2 before listening", async (t) => {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  const p = spawnMeshext(["run", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--envoy-admin", envoy.url, "--drain-time", "20s", "--", "/nonexistent/envoy", "-c", "envoy.yaml"]);
  t.teardown(() => void p.child.kill("SIGKILL"));
  const exit = await p.exited;
  t.is(exit.code, 2, p.stderr());
  t.is(p.stderr().trim(), "meshext run: Envoy command not found: /nonexistent/envoy (after --; omit it to use the Envoy meshext finds: MESHEXT_ENVOY, the pinned install, PATH)");
  t.falsy(p.lines.find((l) => l.msg === "listening"), "nothing listened");
});

test.serial("drain › sidecar process: reports draining to the control plane, then deregisters before exiting", async (t) => {
  const cp = await FakeControlPlane.start();
  t.teardown(() => cp.close());
  const { p } = await start(t, "sidecar", ["--control-plane", cp.url, "--dataplane-name", "web-1", "--dataplane-tags", "kuma.io/service=web"]);
  const registered = () => cp.dataplaneCalls().includes("PUT /meshes/default/dataplanes/web-1");
  const t0 = Date.now();
  while (!registered() && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
  t.true(registered(), `the sidecar registered its dataplane (calls: ${cp.dataplaneCalls().join(", ")})`);
  const sentAt = Date.now();
  p.child.kill("SIGTERM");
  t.is((await p.exited).code, 0, p.stderr());
  const calls = cp.calls.filter((c) => c.path.startsWith("/meshes/default/dataplanes/web-1"));
  const draining = calls.findIndex((c) => c.method === "POST" && c.body.includes("draining"));
  const deleted = calls.findIndex((c) => c.method === "DELETE");
  t.true(draining !== -1, "control plane told the dataplane is draining");
  t.true(deleted > draining, "deregistered after draining was reported");
  // The minimum runs from the drain's start, which follows the signal: measured from the signal, not from the
  // draining call (that call can itself come late on a loaded machine).
  t.true(calls[deleted]!.atMs - sentAt >= MIN_MS, `deregistration waits out the drain (${calls[deleted]!.atMs - sentAt} ms after SIGTERM)`);
});
