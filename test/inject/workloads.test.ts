// injectText over each workload kind: containers, probes, preStop, grace period, preserved input.
import test from "ava";
import { parse } from "yaml";
import { SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";
import { INIT_CONTAINER, SIDECAR_CONTAINER, sidecarResources } from "../../extproc/inject/render.js";
import { SIDECAR_IMAGE } from "../../extproc/inject/settings.js";
import { container, fixture, injected, podSpecOf, podYaml, sourceOf } from "./helpers.js";

const TEMPLATE = ["spec", "template", "spec"];
const KINDS: [string, string[]][] = [
  ["pod.yaml", ["spec"]],
  ["job.yaml", TEMPLATE],
  ["daemonset.yaml", TEMPLATE],
  ["statefulset.json", TEMPLATE],
];
const DRAIN_TIME_MS = SIDECAR_FLAGS.find((f) => f.key === "drainTimeMs")!.default;

for (const [file, specPath] of KINDS) {
  test(`inject › ${file}: gets the sidecar (native) after the traffic-redirect init container, before its own`, async (t) => {
    const spec = podSpecOf(await injected(fixture(file), sourceOf()), specPath);
    t.deepEqual(spec.initContainers.map((c: { name: string }) => c.name).slice(0, 2), [INIT_CONTAINER, SIDECAR_CONTAINER]);
    t.false(spec.containers.some((c: { name: string }) => c.name.startsWith("meshext-")));
    t.deepEqual(spec.volumes.at(-1), { name: "meshext-tmp", emptyDir: { sizeLimit: "64Mi" } });
  });
  test(`inject › ${file} classic: the sidecar before the app, the init container after its own`, async (t) => {
    const spec = podSpecOf(await injected(fixture(file), sourceOf(), ["--no-native-sidecars"]), specPath);
    t.is(spec.containers[0].name, SIDECAR_CONTAINER);
    t.is(spec.initContainers.at(-1).name, INIT_CONTAINER);
  });
}

test("inject › deployment.yaml: injected with its annotated patches, in order", async (t) => {
  const spec = podSpecOf(await injected(fixture("deployment.yaml")), TEMPLATE);
  const sidecar = container(spec, SIDECAR_CONTAINER, "initContainers");
  t.is(sidecar.securityContext.privileged, true);
  t.is(sidecar.resources.limits.memory, "1Gi");
  t.deepEqual(sidecar.env.at(-1), { name: "MESHEXT_MESH", value: "shop" }, "meshextSidecarPatch patches the same container, after sidecarPatch");
  t.deepEqual(container(spec, INIT_CONTAINER, "initContainers").securityContext.seccompProfile, { type: "RuntimeDefault" });
});

test("inject › classic sidecar: runs meshext run -- envoy, readiness on /ready, preStop drains through exec on loopback", async (t) => {
  const spec = podSpecOf(await injected(podYaml(), undefined, ["--no-native-sidecars"]), ["spec"]);
  const sidecar = container(spec, SIDECAR_CONTAINER);
  t.is(sidecar.args[0], "run");
  t.deepEqual(sidecar.args.slice(-2), ["--", "envoy"]);
  t.deepEqual(sidecar.readinessProbe.httpGet, { path: "/ready", port: 9902 });
  t.deepEqual(sidecar.lifecycle.preStop.exec.command, ["node", "/meshext/dist/extproc/cli.js", "drain", "--timeout=35s"]);
  t.deepEqual(sidecar.lifecycle.postStart.exec.command, ["node", "/meshext/dist/extproc/cli.js", "wait-ready", "--timeout=60s"]);
  t.is(sidecar.image, SIDECAR_IMAGE);
  t.deepEqual(sidecar.ports.map((p: { containerPort: number }) => p.containerPort), [9902, 9903, 9000]);
  t.true(sidecar.args.includes(`--drain-time=${DRAIN_TIME_MS / 1000}s`));
  t.deepEqual(sidecar.resources, sidecarResources());
  t.deepEqual(sidecar.resources, { requests: { cpu: "100m", memory: "160Mi" }, limits: { cpu: "2000m", memory: "768Mi" } }, "Envoy's share plus the meshext sidecar's");
});

test("inject › grace period: raised above the drain time when absent, never lowered", async (t) => {
  const raised = podSpecOf(await injected(podYaml()), ["spec"]);
  t.true(raised.terminationGracePeriodSeconds * 1000 > DRAIN_TIME_MS);
  const kept = podSpecOf(await injected(fixture("pod.yaml"), sourceOf()), ["spec"]);
  t.is(kept.terminationGracePeriodSeconds, 120);
  const longer = podSpecOf(await injected(podYaml(), sourceOf(), ["--drain-time=2m", "--grace-margin=10s"]), ["spec"]);
  t.is(longer.terminationGracePeriodSeconds, 130);
});

test("inject › images and uid come from flags", async (t) => {
  const spec = podSpecOf(await injected(podYaml(), sourceOf(), ["--sidecar-image=registry.local/meshext:v1", "--proxy-uid=7777"]), ["spec"]);
  t.is(container(spec, SIDECAR_CONTAINER, "initContainers").image, "registry.local/meshext:v1");
  t.is(container(spec, SIDECAR_CONTAINER, "initContainers").securityContext.runAsUser, 7777);
  t.is(container(spec, INIT_CONTAINER, "initContainers").image, SIDECAR_IMAGE, "the init container runs meshext redirect from the sidecar image by default");
});

test("inject › the pod template is marked meshext.io/injected", async (t) => {
  const out = parse(await injected(fixture("job.yaml"), sourceOf()));
  t.is(out.spec.template.metadata.annotations["meshext.io/injected"], "true");
});

test("inject › YAML: comments, quoting, flow style and long strings of the input survive", async (t) => {
  const input = fixture("deployment.yaml");
  const out = await injected(input);
  for (const line of input.split("\n")) t.true(out.includes(line.replace(/ +#/, " #")), `lost line: ${line}`);
  t.true(out.startsWith("# The demo app"));
});

test("inject › JSON in, JSON out: key order and the 4-space indent kept", async (t) => {
  const input = fixture("statefulset.json");
  const out = await injected(input, sourceOf());
  const before = JSON.parse(input);
  const after = JSON.parse(out);
  t.deepEqual(Object.keys(after), Object.keys(before));
  t.true(out.startsWith('{\n    "apiVersion": "apps/v1",\n    "kind": "StatefulSet",'));
  t.true(out.endsWith("}\n"));
  t.deepEqual(after.spec.template.spec.containers, before.spec.template.spec.containers);
});

test("inject › multi-document YAML: every workload injected, other documents byte-for-byte", async (t) => {
  const input = fixture("multi.yaml");
  const out = await injected(input, sourceOf());
  const [service, , configMap] = input.split("---\n");
  t.true(out.startsWith(service!), "the Service passes through verbatim");
  t.true(out.endsWith("---\n" + configMap!), "the ConfigMap passes through verbatim");
  t.true(out.includes("- name: meshext-sidecar"));
});

test("inject › a kind: List gets each workload item injected", async (t) => {
  const list = { apiVersion: "v1", kind: "List", items: [parse(podYaml()), { apiVersion: "v1", kind: "Service", metadata: { name: "s" } }] };
  const out = JSON.parse(await injected(JSON.stringify(list, null, 2), sourceOf()));
  t.is(out.items[0].spec.initContainers.length, 2);
  t.deepEqual(out.items[1], list.items[1]);
});

test("inject › input without a workload comes back unchanged", async (t) => {
  const input = "apiVersion: v1\nkind: ConfigMap\nmetadata:   {name: x}\n";
  t.is(await injected(input, sourceOf()), input);
});

test("inject › CronJob: the pod template under jobTemplate is injected", async (t) => {
  const input = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '0 3 * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - {name: job, image: example/job:1}\n";
  const spec = podSpecOf(await injected(input, sourceOf()), ["spec", "jobTemplate", "spec", "template", "spec"]);
  t.is(container(spec, SIDECAR_CONTAINER, "initContainers").name, SIDECAR_CONTAINER);
});

test("inject › --sidecar-control-plane reaches the sidecar as MESHEXT_CONTROL_PLANE", async (t) => {
  const url = "http://meshext-control-plane.meshext-system:5681";
  const spec = podSpecOf(await injected(podYaml(), sourceOf(), [`--sidecar-control-plane=${url}`]), ["spec"]);
  t.deepEqual(container(spec, SIDECAR_CONTAINER, "initContainers").env.at(-1), { name: "MESHEXT_CONTROL_PLANE", value: url });
  const without = podSpecOf(await injected(podYaml(), sourceOf()), ["spec"]);
  t.false(JSON.stringify(without).includes("MESHEXT_CONTROL_PLANE"));
});
