// The compose stack's Grafana and alert rules, checked without Docker: the compose file parses with a Grafana
// service whose provisioning (Prometheus data source, dashboard folder) points at what the stack runs and mounts,
// and the compose Prometheus finds its rule files through its mounts.
import test from "ava";
import { existsSync, readdirSync } from "node:fs";
import { join, posix } from "node:path";
import { COMPOSE_YAML, DASHBOARD_JSON, ENVOY_DIR, PROMETHEUS_YML, readYaml, type Yaml } from "./envoy-config.js";

/** The host path (under envoy/) a container path maps to through the service's bind mounts, if any. */
function hostPathOf(service: Yaml, containerPath: string): string | undefined {
  for (const volume of service.volumes ?? []) {
    const [host, target] = String(volume).split(":") as [string, string];
    if (containerPath === target || containerPath.startsWith(target + "/")) return join(ENVOY_DIR, host, containerPath.slice(target.length));
  }
  return undefined;
}

test("grafana › the compose file has a pinned Grafana with a provisioned Prometheus data source and the dashboard", (t) => {
  const services = readYaml(COMPOSE_YAML).services;
  const grafana = services.grafana;
  t.truthy(grafana, "a grafana service");
  t.regex(grafana.image, /^grafana\/grafana(-oss)?:\d+\.\d+\.\d+$/, "pinned image");
  t.true((grafana.ports ?? []).some((p: string) => /:3000\}?$/.test(String(p))), "Grafana publishes its port 3000");

  // The data source reaches the compose Prometheus: it lives in the envoy service's network namespace
  const provisioning = hostPathOf(grafana, "/etc/grafana/provisioning");
  t.truthy(provisioning, "provisioning is mounted");
  const datasources = readdirSync(join(provisioning!, "datasources")).flatMap((f) => readYaml(join(provisioning!, "datasources", f)).datasources);
  const prometheus = datasources.find((d: Yaml) => d.type === "prometheus");
  t.truthy(prometheus);
  t.is(prometheus.uid, "prometheus");
  const listen = services.prometheus.command.find((a: string) => a.startsWith("--web.listen-address=")).split(":").pop();
  const url = new URL(prometheus.url);
  t.is(services.prometheus.network_mode, `service:${url.hostname}`, "the data source host is the service whose network Prometheus shares");
  t.is(url.port, listen);

  // The dashboard provider reads the folder where the dashboard JSON is mounted
  const providers = readdirSync(join(provisioning!, "dashboards")).flatMap((f) => readYaml(join(provisioning!, "dashboards", f)).providers);
  const dashboards = hostPathOf(grafana, providers[0].options.path);
  t.truthy(dashboards, `${providers[0].options.path} is mounted`);
  t.true(existsSync(join(dashboards!, posix.basename(DASHBOARD_JSON))));
  t.is(hostPathOf(grafana, grafana.environment.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH), DASHBOARD_JSON);
});

test("grafana › the compose Prometheus finds alerts.yml through its mounts, as prometheus.yml's rule_files name it", (t) => {
  const prometheus = readYaml(COMPOSE_YAML).services.prometheus;
  const configPath = prometheus.command.find((a: string) => a.startsWith("--config.file=")).slice("--config.file=".length);
  t.is(hostPathOf(prometheus, configPath), PROMETHEUS_YML);
  const ruleFiles: string[] = readYaml(PROMETHEUS_YML).rule_files;
  t.true(ruleFiles.length > 0);
  for (const rule of ruleFiles) {
    const inContainer = posix.join(posix.dirname(configPath), rule);
    const onHost = hostPathOf(prometheus, inContainer);
    t.truthy(onHost, `${inContainer} is not mounted`);
    t.true(existsSync(onHost!), `${onHost}`);
    t.true(existsSync(join(ENVOY_DIR, rule)), `${rule} resolves next to prometheus.yml in the repo too`);
  }
});
