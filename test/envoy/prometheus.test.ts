// A real Prometheus, configured from envoy/prometheus.yml, scrapes the real sidecar process after real ext_proc
// traffic and a drain: the series the compose stack's dashboards rely on are there, through the query API.
import test from "ava";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { DRAIN_METRIC } from "../../extproc/drain/metrics.js";
import { adminUrl, spawnMeshext } from "../drain/meshext-process.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { RunningPrometheus, scrapeConfigFor, type Sample } from "../helpers/prometheus.js";
import { which } from "../helpers/tools.js";
import { PROMETHEUS_YML, readYaml, ROOT } from "./envoy-config.js";

const SIDECAR_JOB = "meshext-sidecar";
const total = (samples: Sample[]): number => samples.reduce((sum, s) => sum + s.value, 0);

test("envoy › promtool accepts the repo's Prometheus scrape config", (t) => {
  const promtool = which("promtool");
  if (!promtool) {
    t.log("promtool not installed (Debian package prometheus, installed by scripts/test-deps.sh as root): skipped");
    t.pass();
    return;
  }
  const check = spawnSync(promtool, ["check", "config", PROMETHEUS_YML], { encoding: "utf8" });
  t.is(check.status, 0, `${check.stdout}${check.stderr}`);
});

test("envoy › real Prometheus scrapes the real sidecar: up, ext_proc streams, decisions and the drain gauge", async (t) => {
  const binary = which("prometheus");
  if (!binary) {
    t.log("prometheus not installed (Debian package prometheus, installed by scripts/test-deps.sh as root): skipped");
    t.pass();
    return;
  }
  // Given the sidecar process deciding with the sample policies, and a Prometheus scraping its /metrics every 1s
  const sidecar = spawnMeshext([
    "sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
    "--policies", join(ROOT, "envoy", "policies"), "--dataplane-file", join(ROOT, "envoy", "dataplane.yaml"),
    "--trust-kuma-tags-header", "--drain-min", "60s", "--drain-time", "120s",
  ]);
  t.teardown(() => sidecar.child.kill("SIGKILL"));
  const admin = await adminUrl(sidecar);
  const listening = sidecar.lines.find((l) => l.msg === "listening")!;
  const prometheus = await RunningPrometheus.start(binary, scrapeConfigFor(readYaml(PROMETHEUS_YML), { [SIDECAR_JOB]: new URL(admin).host }));
  t.teardown(() => prometheus.stop());

  // When Envoy-like ext_proc traffic flows (allowed `web` requests and denied anonymous ones) and a drain starts
  const envoy = new EnvoyExtProcClient(String(listening.grpc), { messageTimeoutMs: 5000, allowModeOverride: true });
  t.teardown(() => envoy.close());
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    statuses.push((await envoy.request({ path: `/web/${i}`, headers: [["x-kuma-tags", "&kuma.io/service=web&"]] })).status);
    statuses.push((await envoy.request({ path: `/anon/${i}` })).status);
  }
  t.true(statuses.includes(403), `the sample MeshTrafficPermission denies anonymous clients; got ${statuses.join(",")}`);
  t.is((await fetch(`${admin}/drain`, { method: "POST" })).status, 202);

  // Then, through Prometheus's query API:
  const up = await prometheus.until(`up{job="${SIDECAR_JOB}"}`, (s) => s.length === 1 && s[0]!.value === 1);
  t.is(up[0]?.value, 1, "the sidecar target is up");
  const streams = await prometheus.until(`meshext_extproc_streams_opened_total{job="${SIDECAR_JOB}"}`, (s) => total(s) >= 8);
  t.true(total(streams) >= 8, `streams opened: ${JSON.stringify(streams)}`);
  const decisions = await prometheus.until(`meshext_decisions_total{job="${SIDECAR_JOB}"}`, (s) => s.some((x) => x.metric.action === "deny" && x.value > 0));
  t.true(decisions.some((d) => d.metric.kind === "MeshTrafficPermission" && d.metric.action === "deny" && d.value >= 4), JSON.stringify(decisions));
  const draining = await prometheus.until(`${DRAIN_METRIC.draining}{job="${SIDECAR_JOB}"}`, (s) => s[0]?.value === 1);
  t.is(draining[0]?.value, 1, "the drain gauge reached Prometheus");
  const duration = await prometheus.query(`${DRAIN_METRIC.durationSeconds}{job="${SIDECAR_JOB}"}`);
  t.is(duration.length, 1, `${DRAIN_METRIC.durationSeconds} is scraped`);
});
