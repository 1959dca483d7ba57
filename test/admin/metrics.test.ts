// /metrics of the real sidecar after real traffic: the expected series exist, and promtool accepts them.
import test from "ava";
import { spawnSync } from "node:child_process";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";
import { which } from "../helpers/tools.js";

const EXPECTED = [
  "meshext_extproc_streams_opened_total",
  "meshext_extproc_streams_ended_total",
  "meshext_extproc_streams_cancelled_total",
  "meshext_extproc_messages_received_total",
  "meshext_extproc_replies_total",
  "meshext_extproc_phase_duration_seconds_bucket",
  "meshext_decisions_total",
  "meshext_process_cpu_seconds_total",
  "meshext_nodejs_eventloop_lag_seconds",
];

test("metrics › after traffic /metrics carries the ext_proc series and passes promtool check metrics", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const envoy = new EnvoyExtProcClient(h.grpcAddress, { messageTimeoutMs: 3000 });
  t.teardown(() => envoy.close());
  for (let i = 0; i < 3; i++) await envoy.request({ path: `/r${i}` });

  const res = await fetch(`${h.adminUrl}/metrics`);
  t.is(res.status, 200);
  t.regex(res.headers.get("content-type") ?? "", /text\/plain/);
  const text = await res.text();
  for (const name of EXPECTED) t.true(text.includes(`\n${name}`), `missing ${name}`);
  t.regex(text, /meshext_extproc_messages_received_total\{phase="request_headers"\} 3/);
  t.regex(text, /meshext_extproc_replies_total\{kind="request_headers"\} 3/);

  const promtool = which("promtool");
  if (!promtool) {
    t.log("promtool not installed (Debian package prometheus): skipped the promtool lint; run npm test as root to install it");
    return;
  }
  const lint = spawnSync(promtool, ["check", "metrics"], { input: text, encoding: "utf8" });
  t.is(lint.status, 0, `promtool check metrics said:\n${lint.stdout}${lint.stderr}`);
});
