// What ships for Kubernetes, checked against Kubernetes' own schemas (1.33 and 1.34+) and against the code
// it must match: the webhook's Deployment, Service and MutatingWebhookConfiguration (path, ports, flags,
// namespace label, failure policy), the PodMonitor (port names, the injected label, the Prometheus
// Operator's schema) and the Prometheus Kubernetes scrape jobs (promtool, and the annotations inject writes).
import test from "ava";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments, stringify } from "yaml";
import { WEBHOOK_FLAGS } from "../../extproc/commands/webhook.js";
import { resolveFlags } from "../../extproc/config/flags.js";
import { METRICS_PORT_ANNOTATION, PROMETHEUS_ANNOTATIONS, PROMETHEUS_OWNER_ANNOTATION, STATS_PORT_ANNOTATION } from "../../extproc/inject/plan.js";
import { INJECTED_LABEL, PORT_NAMES } from "../../extproc/inject/render.js";
import { SIDECAR_IMAGE } from "../../extproc/inject/settings.js";
import { INJECT_PATH } from "../../extproc/webhook/server.js";
import { KUBERNETES_VERSIONS, schemaViolations } from "../helpers/k8s-schema.js";
import { which } from "../helpers/tools.js";

type Obj = Record<string, any>;
const DIR = fileURLToPath(new URL("../../../envoy/kubernetes/", import.meta.url));
const docs = (file: string): Obj[] => parseAllDocuments(readFileSync(DIR + file, "utf8")).map((d) => d.toJS() as Obj);
const webhook = docs("webhook.yaml");
const byKind = (kind: string) => webhook.find((d) => d.kind === kind)!;

for (const { name, pkg } of KUBERNETES_VERSIONS) {
  test(`manifests › webhook.yaml and podmonitor.yaml are valid for Kubernetes ${name}`, async (t) => {
    for (const m of [...webhook, ...docs("podmonitor.yaml")]) t.deepEqual(await schemaViolations(m, pkg), [], `${m.kind} ${m.metadata.name}`);
  });
}

test("manifests › the MutatingWebhookConfiguration reaches the webhook's route and port, for labelled namespaces, never blocking pods", (t) => {
  const config = byKind("MutatingWebhookConfiguration").webhooks[0];
  const service = byKind("Service");
  const container = byKind("Deployment").spec.template.spec.containers[0];
  t.deepEqual(config.admissionReviewVersions, ["v1"]);
  t.is(config.failurePolicy, "Ignore");
  t.is(config.sideEffects, "None");
  t.deepEqual(config.namespaceSelector, { matchLabels: { "meshext.io/inject": "enabled" } });
  t.is(config.clientConfig.service.path, INJECT_PATH);
  t.is(config.clientConfig.service.name, service.metadata.name);
  t.is(config.clientConfig.service.namespace, service.metadata.namespace);
  const servicePort = service.spec.ports.find((p: Obj) => p.port === config.clientConfig.service.port);
  const containerPort = container.ports.find((p: Obj) => p.name === servicePort.targetPort);
  // the container's flags are meshext webhook's, and it listens where the Service sends
  const { values } = resolveFlags(WEBHOOK_FLAGS, container.args.slice(1), {});
  t.is(container.args[0], "webhook");
  t.is(values.listen, `0.0.0.0:${containerPort.containerPort}`);
  const mount = container.volumeMounts.find((m: Obj) => m.name === "tls").mountPath;
  t.true(String(values.tlsCertFile).startsWith(mount + "/") && String(values.tlsKeyFile).startsWith(mount + "/"));
  t.is(container.image, SIDECAR_IMAGE);
  t.deepEqual(container.readinessProbe.httpGet, { path: "/healthz", port: containerPort.containerPort, scheme: "HTTPS" });
  t.false(byKind("ServiceAccount").automountServiceAccountToken, "the webhook calls no Kubernetes API");
});

test("manifests › the PodMonitor scrapes the injected pods' named ports", (t) => {
  const [monitor] = docs("podmonitor.yaml");
  t.deepEqual(monitor!.spec.selector.matchLabels, { [INJECTED_LABEL]: "true" });
  t.deepEqual(
    monitor!.spec.podMetricsEndpoints.map((e: Obj) => [e.port, e.path]),
    [[PORT_NAMES.stats, "/stats/prometheus"], [PORT_NAMES.admin, "/metrics"]],
  );
});

/** Prometheus' meta label for a pod annotation. */
const meta = (annotation: string) => `__meta_kubernetes_pod_annotation_${annotation.replace(/[^A-Za-z0-9_]/g, "_")}`;

test("manifests › the Kubernetes scrape jobs read the annotations inject writes, and promtool accepts them", (t) => {
  const config = parse(readFileSync(DIR + "prometheus.yml", "utf8")) as Obj;
  const job = (name: string) => config.scrape_configs.find((j: Obj) => j.job_name === name);
  const sources = (name: string) => job(name).relabel_configs.flatMap((r: Obj) => r.source_labels ?? []);
  t.true(sources("kubernetes-pods").includes(meta(PROMETHEUS_ANNOTATIONS.scrape)));
  t.true(sources("kubernetes-pods").includes(meta(PROMETHEUS_ANNOTATIONS.port)));
  t.true(sources("kubernetes-pods").includes(meta(PROMETHEUS_ANNOTATIONS.path)));
  t.true(sources("kubernetes-pods").includes(meta(PROMETHEUS_OWNER_ANNOTATION)), "pods announcing Envoy are left to meshext-envoy");
  t.true(sources("meshext-envoy").includes(meta(STATS_PORT_ANNOTATION)));
  t.is(job("meshext-envoy").metrics_path, "/stats/prometheus");
  t.true(sources("meshext-sidecar").includes(meta(METRICS_PORT_ANNOTATION)));
  for (const j of config.scrape_configs) t.deepEqual(j.kubernetes_sd_configs, [{ role: "pod" }], j.job_name);
  const promtool = which("promtool");
  if (!promtool) return void t.log("skipped the promtool check: no promtool (Debian package prometheus)");
  // Debian's Prometheus is built without Kubernetes discovery: promtool checks the rest (relabel rules, regexes)
  // with the discovery swapped for a static target.
  const dir = mkdtempSync(join(tmpdir(), "meshext-prom-k8s-"));
  const checkable = { ...config, rule_files: [], scrape_configs: config.scrape_configs.map(({ kubernetes_sd_configs: _k, ...j }: Obj) => ({ ...j, static_configs: [{ targets: ["127.0.0.1:9"] }] })) };
  writeFileSync(join(dir, "prometheus.yml"), stringify(checkable));
  const r = spawnSync(promtool, ["check", "config", join(dir, "prometheus.yml")], { encoding: "utf8" });
  t.is(r.status, 0, r.stdout + r.stderr);
});
