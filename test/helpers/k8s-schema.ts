// Validates manifests against Kubernetes' own OpenAPI schemas, as shipped (pre-compiled, offline) by
// the `kubernetes-models` package, for the oldest and the newest Kubernetes API we claim. Strict: a
// field the version does not know is an error (the compiled validators read exactly the properties
// their schema declares, so a property no validator read is unknown to that version).
import { dirname, join } from "node:path";
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * The oldest Kubernetes API classic sidecars are checked against: kubernetes-models 4.4.2 (its Container has
 * resizePolicy, 1.27, and no restartPolicy, 1.28), installed as kubernetes-models-classic-floor.
 */
export const CLASSIC_FLOOR = { name: "1.27 (classic sidecars' floor)", pkg: "kubernetes-models-classic-floor" } as const;

/** The two schema sets: npm aliases of kubernetes-models (see package.json). */
export const KUBERNETES_VERSIONS = [
  // kubernetes-models 4.5.1: knows Lifecycle.stopSignal (1.33), not Container.restartPolicyRules (1.34).
  { name: "1.33 (oldest claimed)", pkg: "kubernetes-models-oldest" },
  // kubernetes-models 5.1.0: knows Container.restartPolicyRules and EnvVarSource.fileKeyRef (1.34+).
  { name: "1.34+ (newest claimed)", pkg: "kubernetes-models" },
] as const;

const SCHEMA_OF_KIND: Record<string, string> = {
  Pod: "IoK8sApiCoreV1Pod",
  Deployment: "IoK8sApiAppsV1Deployment",
  StatefulSet: "IoK8sApiAppsV1StatefulSet",
  DaemonSet: "IoK8sApiAppsV1DaemonSet",
  ReplicaSet: "IoK8sApiAppsV1ReplicaSet",
  Job: "IoK8sApiBatchV1Job",
  CronJob: "IoK8sApiBatchV1CronJob",
  Service: "IoK8sApiCoreV1Service",
  ServiceAccount: "IoK8sApiCoreV1ServiceAccount",
  Namespace: "IoK8sApiCoreV1Namespace",
  MutatingWebhookConfiguration: "IoK8sApiAdmissionregistrationV1MutatingWebhookConfiguration",
  PodDisruptionBudget: "IoK8sApiPolicyV1PodDisruptionBudget",
};

/** Kinds that are CRDs of another project: their schema package, whatever Kubernetes version is checked. */
const CRD_SCHEMAS: Record<string, { pkg: string; type: string }> = {
  PodMonitor: { pkg: "@kubernetes-models/prometheus-operator", type: "ComGithubPrometheusOperatorPrometheusOperatorPkgApisMonitoringV1PodMonitor" },
};

type Validate = ((data: unknown) => boolean) & { errors?: { instancePath: string; message?: string; keyword: string; params: unknown }[] | null };

const cache = new Map<string, Validate>();

async function validatorFor(kubernetesPkg: string, kind: string): Promise<Validate> {
  const crd = CRD_SCHEMAS[kind];
  const pkg = crd?.pkg ?? kubernetesPkg;
  const type = crd?.type ?? SCHEMA_OF_KIND[kind];
  if (!type) throw new Error(`no schema known for kind ${kind}`);
  const key = `${pkg}/${type}`;
  const hit = cache.get(key);
  if (hit) return hit;
  // The packages do not all export _schemas/*: load the file next to their entry point.
  const dir = join(dirname(fileURLToPath(import.meta.resolve(pkg))), "_schemas");
  const file = [".mjs", ".js"].map((ext) => join(dir, type + ext)).find((f) => existsSync(f));
  if (!file) throw new Error(`${pkg} has no schema ${type}`);
  const validate = ((await import(pathToFileURL(file).href)) as { validate: Validate }).validate;
  cache.set(key, validate);
  return validate;
}

/** Wraps a JSON value so that every property read (or key enumeration) is recorded per path. */
function recordingView(value: unknown, path: string, read: Map<string, Set<string>>): unknown {
  if (value === null || typeof value !== "object") return value;
  const seen = new Set<string>();
  read.set(path, seen);
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value)
    ? value.map((v, i) => recordingView(v, `${path}/${i}`, read))
    : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, recordingView(v, `${path}/${k}`, read)]));
  return new Proxy(copy, {
    get(target, key, receiver) {
      if (typeof key === "string") seen.add(key);
      return Reflect.get(target, key, receiver);
    },
    ownKeys(target) {
      for (const k of Reflect.ownKeys(target)) if (typeof k === "string") seen.add(k);
      return Reflect.ownKeys(target);
    },
  });
}

function unknownFields(value: unknown, path: string, read: Map<string, Set<string>>, out: string[]): void {
  if (value === null || typeof value !== "object") return;
  for (const [k, v] of Object.entries(value)) {
    if (!Array.isArray(value) && !read.get(path)?.has(k)) out.push(`${path}/${k}: unknown field`);
    unknownFields(v, `${path}/${k}`, read, out);
  }
}

/** Every violation of one manifest against one version's schema: schema errors and unknown fields. */
export async function schemaViolations(manifest: Record<string, unknown>, pkg: string): Promise<string[]> {
  const validate = await validatorFor(pkg, String(manifest.kind));
  const read = new Map<string, Set<string>>();
  const ok = validate(recordingView(manifest, "", read));
  const out = ok ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"}: ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
  unknownFields(manifest, "", read, out);
  return out;
}
