// --decision-log-push on the real sidecar binary against the real control-plane binary: the sample is bounded per
// interval, POST bodies fit the batch size (a record too large for one is dropped and counted), a control plane that
// goes away costs only counted drops, and the flag without --control-plane stops the sidecar with exit 2.
import test from "ava";
import { spawnMeshext } from "../drain/meshext-process.js";
import { pollUntil } from "../helpers/poll-until.js";
import { controlPlaneChild, controlPlaneProcess, metric, metricReaches, seedSamplePolicies, sidecarProcess, xfcc } from "../control-plane/pushing-mesh.js";

const web = (i: number) => ({ method: "GET", path: `/orders/${i}`, headers: [xfcc("web"), ["x-request-id", `web-${i}`]] as Array<[string, string]> });

test("push › at most --decision-log-push-max-records are sent per interval, the rest counted sampled_out", async (t) => {
  // Given a sidecar sampling at most 2 records per 1 s interval
  const cp = await controlPlaneProcess(t);
  await seedSamplePolicies(t, cp);
  const sidecar = await sidecarProcess(t, cp, ["--decision-log-push", "--decision-log-push-max-records", "2", "--decision-log-push-interval", "1s"]);
  // When ten requests are decided
  for (let i = 0; i < 10; i++) t.not((await sidecar.envoy.request(web(i))).status, 403);
  // Then every record is either pushed or counted sampled_out, and no push carried more than two
  const pushed = await pollUntil(
    "pushed + sampled_out = 10",
    async () => [await metric(sidecar.adminUrl, "meshext_decision_log_pushed_total"), await metric(sidecar.adminUrl, 'meshext_decision_log_push_dropped_total{reason="sampled_out"}')] as const,
    ([p, s]) => p + s === 10,
  );
  t.true(pushed[0] >= 2 && pushed[1] >= 1, `pushed ${pushed[0]}, sampled out ${pushed[1]}`);
  const received = await metricReaches(cp, "meshext_control_plane_decision_samples_received_total", (n) => n === pushed[0]);
  const accepted = await metric(cp, 'meshext_control_plane_decision_sample_pushes_total{result="accepted"}');
  t.true(received <= 2 * accepted, `${received} records in ${accepted} pushes`);
});

test("push › bodies fit --decision-log-push-batch-bytes; a record larger than a batch is dropped as too_large", async (t) => {
  // Given a control plane taking at most 2 KiB a body, and a sidecar batching at 2 KiB and logging the x-big header
  const cp = await controlPlaneProcess(t, ["--max-body-bytes", "2048"]);
  await seedSamplePolicies(t, cp);
  const sidecar = await sidecarProcess(t, cp, ["--decision-log-push", "--decision-log-push-interval", "500ms", "--decision-log-push-batch-bytes", "2048", "--decision-log-headers", "x-big"]);
  // When eight ordinary requests and one with a 3000-byte x-big header are decided
  for (let i = 0; i < 8; i++) await sidecar.envoy.request(web(i));
  await sidecar.envoy.request({ ...web(8), headers: [...web(8).headers, ["x-big", "b".repeat(3000)]] });
  // Then the eight are pushed in several bodies the control plane accepts, and the big one is counted too_large
  await metricReaches(sidecar.adminUrl, "meshext_decision_log_pushed_total", (n) => n === 8);
  await metricReaches(sidecar.adminUrl, 'meshext_decision_log_push_dropped_total{reason="too_large"}', (n) => n === 1);
  t.is(await metric(sidecar.adminUrl, 'meshext_decision_log_push_dropped_total{reason="refused"}'), 0);
  t.is(await metric(cp, "meshext_control_plane_decision_samples_received_total"), 8);
  t.is(await metric(cp, 'meshext_control_plane_decision_sample_pushes_total{result="too_large"}'), 0);
  t.true((await metric(cp, 'meshext_control_plane_decision_sample_pushes_total{result="accepted"}')) >= 2);
});

test("push › a control plane that goes away costs counted drops (send_error), never a decision", async (t) => {
  // Given a pushing sidecar whose first records arrived
  const cp = await controlPlaneChild(t);
  await seedSamplePolicies(t, cp.url);
  const sidecar = await sidecarProcess(t, cp.url, ["--decision-log-push", "--decision-log-push-interval", "200ms"]);
  t.not((await sidecar.envoy.request(web(0))).status, 403);
  await metricReaches(sidecar.adminUrl, "meshext_decision_log_pushed_total", (n) => n === 1);
  // When the control plane is stopped and two more requests are decided
  await cp.stop();
  for (let i = 1; i < 3; i++) t.not((await sidecar.envoy.request(web(i))).status, 403, "the last good policy set still decides");
  // Then their push fails and both records are counted send_error
  await metricReaches(sidecar.adminUrl, 'meshext_decision_log_push_dropped_total{reason="send_error"}', (n) => n === 2);
  t.is(await metric(sidecar.adminUrl, "meshext_decision_log_pushed_total"), 1);
});

test("push › --decision-log-push without --control-plane stops the sidecar with exit 2 and says why", async (t) => {
  const proc = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--decision-log-push"]);
  t.is((await proc.exited).code, 2);
  t.regex(proc.stderr(), /--decision-log-push needs --control-plane/);
});
