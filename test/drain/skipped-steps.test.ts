// A drain step with nothing to act on — no --envoy-admin, no --control-plane, no Envoy of ours — is logged as
// `skipped` with the reason, never as `ok`; steps that did act still say `ok`.
import test from "ava";
import { Writable } from "node:stream";
import { Registry } from "prom-client";
import { AdminServer } from "../../extproc/admin/server.js";
import { installDrain } from "../../extproc/drain/install.js";
import { createLogger, silentLogger } from "../../extproc/log.js";
import { Readiness } from "../../extproc/readiness.js";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";

/** A logger whose JSON lines are collected. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger("info", sink), lines };
}

async function drainWith(envoyAdmin: string, drainTimeMs = 300) {
  const { log, lines } = recordingLogger();
  const admin = new AdminServer(silentLogger());
  const host = { log, registry: new Registry(), readiness: new Readiness(), admin, health: { setServing: () => {} }, stop: async () => {} };
  const drain = installDrain(host, { envoyAdmin, inboundStatPrefix: "inbound", drainMinMs: 0, drainTimeMs, drainListeners: true, envoyKillGraceMs: 100 }, { callTimeoutMs: 5000 });
  void drain.start("test");
  await drain.done;
  const steps = Object.fromEntries(lines.filter((l) => typeof l.step === "string" && l.outcome !== undefined).map((l) => [l.step, `${String(l.outcome)}${l.reason ? ` (${String(l.reason)})` : ""}`]));
  return { steps, messages: lines.map((l) => String(l.msg)) };
}

test("drain steps › without Envoy admin, control plane or an Envoy child, their steps say skipped and why", async (t) => {
  // Given a sidecar with no --envoy-admin, no --control-plane, Envoy not started by meshext; when it drains
  const { steps, messages } = await drainWith("");
  // Then each step that had nothing to call says so
  t.deepEqual(steps, {
    ready_503_health_not_serving: "ok",
    envoy_healthcheck_fail: "skipped (no --envoy-admin)",
    envoy_drain_listeners: "skipped (no --envoy-admin)",
    control_plane_draining: "skipped (no --control-plane)",
    control_plane_deregister: "skipped (no --control-plane)",
    stop_envoy: "skipped (Envoy is not our child (meshext run starts it))",
    close_servers: "ok",
  });
  t.true(messages.includes("drain step envoy_healthcheck_fail: skipped (no --envoy-admin)"));
  t.false(messages.includes("drain step envoy_healthcheck_fail: ok"));
});

test("drain steps › with an Envoy admin its steps say ok", async (t) => {
  // Given an Envoy admin that answers
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  // When the sidecar drains; then the Envoy steps ran and say ok
  const { steps } = await drainWith(envoy.url, 10_000); // room for the Envoy calls on a loaded machine; ends once nothing is in flight
  t.is(steps.envoy_healthcheck_fail, "ok");
  t.is(steps.envoy_drain_listeners, "ok");
  t.truthy(envoy.firstCall("POST", "/healthcheck/fail"));
});
