// Identity and tags as Kuma names them on Kubernetes: kuma.io/service from the workload's labels
// (app.kubernetes.io/name, then app, then its name) and namespace, overridable by annotation, read by
// the real sidecar config into its Dataplane; the mesh from kuma.io/mesh; the control-plane token from
// a Secret; --no-register renders a sidecar that fetches policies but registers nothing.
import test from "ava";
import { Registry } from "prom-client";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { loadRunConfig } from "../../extproc/commands/run.js";
import { createLogger } from "../../extproc/log.js";
import { dataplaneClientFromConfig, httpPolicySourceFromConfig, localDataplane } from "../../extproc/policy-source/from-config.js";
import { SIDECAR_CONTAINER } from "../../extproc/inject/render.js";
import { container, injected, podSpecOf, run, sourceOf } from "./helpers.js";

type Obj = Record<string, any>;

function deployment({ labels = {}, annotations = {}, namespace = "shop", name = "web" }: { labels?: Record<string, string>; annotations?: Record<string, string>; namespace?: string | null; name?: string } = {}): string {
  const ns = namespace === null ? "" : `  namespace: ${namespace}\n`;
  const l = Object.entries(labels).map(([k, v]) => `        ${k}: ${v}\n`).join("");
  const a = Object.entries(annotations).map(([k, v]) => `        ${k}: "${v}"\n`).join("");
  return `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n${ns}spec:\n  selector: {matchLabels: {x: y}}\n  template:\n    metadata:\n${l ? `      labels:\n${l}` : ""}${a ? `      annotations:\n${a}` : ""}    spec:\n      containers:\n      - name: app\n        image: example/app:1\n        ports: [{containerPort: 8080}]\n`;
}

async function sidecarArgs(text: string, argv: string[] = []): Promise<string[]> {
  return container(podSpecOf(await injected(text, sourceOf(), argv), ["spec", "template", "spec"]), SIDECAR_CONTAINER, "initContainers").args;
}

/** The Dataplane the real sidecar builds from the rendered flags. */
function dataplaneOf(args: string[]) {
  const { config } = loadRunConfig(args.slice(1, args.indexOf("--")), { MESHEXT_DATAPLANE_NAME: "web-5d9c-abcde" });
  return { config, local: localDataplane(config) };
}

const CASES: [string, Parameters<typeof deployment>[0], string][] = [
  ["app.kubernetes.io/name wins", { labels: { "app.kubernetes.io/name": "shopfront", app: "other" } }, "shopfront_shop_svc_8080"],
  ["then app", { labels: { app: "cart" } }, "cart_shop_svc_8080"],
  ["then the workload's name", {}, "web_shop_svc_8080"],
  ["no namespace: default", { namespace: null }, "web_default_svc_8080"],
  ["the annotation overrides", { labels: { app: "cart" }, annotations: { "meshext.io/service": "backend_legacy" } }, "backend_legacy"],
];

for (const [title, input, service] of CASES) {
  test(`identity › kuma.io/service: ${title} (${service}), and the sidecar's Dataplane carries it`, async (t) => {
    const { local } = dataplaneOf(await sidecarArgs(deployment(input)));
    t.is(local.dataplane.inbounds[0]!.tags["kuma.io/service"], service);
    t.is(local.dataplane.inbounds[0]!.tags["k8s.kuma.io/namespace"], input?.namespace === null ? "default" : "shop");
    t.is(local.dataplane.name, "web-5d9c-abcde", "the pod's name (env MESHEXT_DATAPLANE_NAME from metadata.name)");
  });
}

test("identity › pod labels become tags (as Kuma's), the mesh comes from kuma.io/mesh", async (t) => {
  const { local, config } = dataplaneOf(await sidecarArgs(deployment({ labels: { app: "cart", version: "v2" }, annotations: { "kuma.io/mesh": "payments" } })));
  t.like(local.dataplane.inbounds[0]!.tags, { app: "cart", version: "v2" });
  t.is(config.mesh, "payments");
  t.is(local.dataplane.mesh, "payments");
});

test("identity › a Pod made by a ReplicaSet (generateName only, as the webhook sees it) is named by its labels or its generateName's base", async (t) => {
  const pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: web-7d4b9c6f5-\n  namespace: shop\nspec:\n  containers:\n  - {name: app, image: example/app:1}\n";
  const args = container(podSpecOf(await injected(pod, sourceOf())), SIDECAR_CONTAINER, "initContainers").args as string[];
  t.true(args.includes("--dataplane-tags=kuma.io/service=web_shop_svc,k8s.kuma.io/namespace=shop"), args.join(" "));
});

test("identity › a service annotation with separators is refused (it would forge other tags)", async (t) => {
  const r = await run(deployment({ annotations: { "meshext.io/service": "web,team=admin" } }), sourceOf());
  t.false(r.ok);
  if (!r.ok) t.regex(r.failure.message, /meshext\.io\/service must be a service name/);
});

test("identity › the control-plane token comes from a Secret through valueFrom, never as a literal", async (t) => {
  const text = await injected(deployment(), sourceOf(), ["--sidecar-control-plane=http://cp.meshext-system:5681", "--sidecar-control-plane-token-secret=meshext-cp-token:dataplane"]);
  const c: Obj = container(podSpecOf(text, ["spec", "template", "spec"]), SIDECAR_CONTAINER, "initContainers");
  t.deepEqual(c.env.find((e: Obj) => e.name === "MESHEXT_CONTROL_PLANE_TOKEN"), { name: "MESHEXT_CONTROL_PLANE_TOKEN", valueFrom: { secretKeyRef: { name: "meshext-cp-token", key: "dataplane" } } });
  const defaultKey: Obj = container(podSpecOf(await injected(deployment(), sourceOf(), ["--sidecar-control-plane-token-secret=cp"]), ["spec", "template", "spec"]), SIDECAR_CONTAINER, "initContainers");
  t.deepEqual(defaultKey.env.at(-1).valueFrom.secretKeyRef, { name: "cp", key: "token" });
  // and the sidecar reads that variable as its --control-plane-token
  const { config } = loadSidecarConfig([], { MESHEXT_CONTROL_PLANE_TOKEN: "from-secret" });
  t.is(config.controlPlaneToken, "from-secret");
});

test("identity › --no-register: the sidecar still fetches policies from the control plane but registers no Dataplane", async (t) => {
  const args = await sidecarArgs(deployment(), ["--no-register", "--sidecar-control-plane=http://127.0.0.1:5681"]);
  t.true(args.includes("--no-register"));
  const flags = args.slice(1, args.indexOf("--"));
  const { config } = loadRunConfig(flags, { MESHEXT_CONTROL_PLANE: "http://127.0.0.1:5681" });
  const local = localDataplane(config);
  const log = createLogger("silent");
  t.is(dataplaneClientFromConfig(config, local, log), undefined, "no registration");
  t.truthy(httpPolicySourceFromConfig(config, () => {}, log, new Registry()), "policies still come from the control plane");
  const registering = loadSidecarConfig(["--control-plane=http://127.0.0.1:5681"], {}).config;
  t.truthy(dataplaneClientFromConfig(registering, localDataplane(registering), log), "the default registers");
  t.false((await sidecarArgs(deployment())).includes("--no-register"));
});
