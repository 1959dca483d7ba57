// `meshext sidecar … | head -n1`: once the reader of stdout is gone, log lines and decision-log lines are
// counted and dropped; the process never dies of an unhandled EPIPE and still drains and exits 0.
import test from "ava";
import { spawnMeshext } from "../drain/meshext-process.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";

for (const decisionLog of [false, true]) {
  test(`closed stdout › ${decisionLog ? "with" : "without"} --decision-log stdout: given the reader closed stdout after the first lines, when the sidecar logs on and drains, then it exits 0 without an EPIPE crash`, async (t) => {
    // given a sidecar whose stdout reader goes away once it said "listening"
    // (a control plane that never answers keeps it before its first sync: every decision is a deny, and logged)
    const args = ["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--before-first-sync", "deny", "--control-plane", "http://127.0.0.1:9", "--kuma-version", "2.14", "--dataplane-tags", "kuma.io/service=backend", "--drain-min", "0s", "--drain-time", "2s"];
    const proc = spawnMeshext(decisionLog ? [...args, "--decision-log", "stdout"] : args);
    t.teardown(() => proc.child.kill("SIGKILL"));
    const listening = await proc.waitForLine((l) => l.msg === "listening", 30_000);
    proc.child.stdout!.destroy();
    // when it keeps writing: decisions (each a line on stdout with the decision log) and the drain's lines
    const envoy = new EnvoyExtProcClient(String(listening.grpc), { messageTimeoutMs: 5000 });
    t.teardown(() => envoy.close());
    for (let i = 0; i < 20; i++) await envoy.request({ headers: [["x-request-id", `r${i}`]] });
    envoy.close();
    const admin = String(listening.admin);
    const metrics = await (await fetch(`http://${admin}/metrics`)).text();
    proc.child.kill("SIGTERM");
    // then it drains and exits 0, and nothing about EPIPE reached stderr
    const exit = await proc.exited;
    t.is(exit.code, 0, proc.stderr());
    t.notRegex(proc.stderr(), /EPIPE|Unhandled|Error:/);
    t.regex(metrics, /meshext_log_write_errors_total \d+/);
  });
}
