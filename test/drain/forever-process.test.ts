// The real `meshext run` process and real signals: SIGUSR2 drains forever (Kuma's signal), the
// SIGTERM that follows exits at once, stopping the Envoy child.
import test from "ava";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";
import { FAKE_ENVOY_PATH, spawnMeshext } from "./meshext-process.js";

test("drain forever › meshext run: SIGUSR2 drains forever; the SIGTERM after it exits within a second with Envoy stopped", async (t) => {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  const p = spawnMeshext(["run", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--envoy-admin", envoy.url, "--drain-time", "30s", "--", process.execPath, FAKE_ENVOY_PATH, "-c", "its-own-bootstrap.yaml"]);
  t.teardown(() => void p.child.kill("SIGKILL"));
  await p.waitForLine((l) => l.msg === "listening");
  await p.waitForLine((l) => l.fakeEnvoy === "started");

  p.child.kill("SIGUSR2");
  await p.waitForLine((l) => l.step === "start" && l.mode === "forever");
  await p.waitForLine((l) => l.step === "control_plane_draining");
  // (GET /ready is meshext run waiting for Envoy to be LIVE before it logs "envoy started".)
  const drainCalls = envoy.calls.filter((c) => `${c.method} ${c.url}` !== "GET /ready");
  t.deepEqual(drainCalls.map((c) => `${c.method} ${c.url.split("?")[0]}`), ["POST /healthcheck/fail", "POST /drain_listeners"]);
  t.is(drainCalls[1]!.url, "/drain_listeners?inboundonly&graceful&skip_exit");
  await new Promise((r) => setTimeout(r, 1500));
  t.is(p.child.exitCode, null, "still running: drain-forever has no deadline");

  const sigtermAt = Date.now();
  p.child.kill("SIGTERM");
  const exit = await p.exited;
  t.is(exit.code, 0, p.stderr());
  t.true(exit.atMs - sigtermAt < 1000, `exited ${exit.atMs - sigtermAt} ms after SIGTERM`);
  t.truthy(p.lines.find((l) => l.fakeEnvoy === "SIGTERM"), "the Envoy child was stopped");
  t.falsy(p.lines.find((l) => l.step === "wait" && l.reason === "deadline"), "no second drain wait");
});
