// Sidecar modes: native by default, --no-native-sidecars for classic, the meshext.io/native-sidecars
// annotation wins, a bad value refuses; injection is idempotent in both; re-injecting in the other mode
// moves the sidecar; a workload injected by an earlier release (a separate Envoy container and its
// ConfigMap) is migrated to the one sidecar container.
import test from "ava";
import { INIT_CONTAINER, SIDECAR_CONTAINER } from "../../extproc/inject/render.js";
import { container, fixture, injected, podSpecOf, run, sourceOf } from "./helpers.js";

type Obj = Record<string, any>;
const names = (list: Obj[] | undefined) => (list ?? []).map((c) => c.name);
const CLASSIC = ["--no-native-sidecars"];

function podWith(annotation?: string): string {
  const a = annotation === undefined ? "" : `  annotations:\n    meshext.io/native-sidecars: "${annotation}"\n`;
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n${a}spec:\n  initContainers:\n  - name: migrate\n    image: example/migrate:1\n  containers:\n  - name: app\n    image: example/app:1\n`;
}

test("modes › by default: init first, then the sidecar with restartPolicy Always, then the workload's own inits", async (t) => {
  const spec = podSpecOf(await injected(podWith(), sourceOf()));
  t.deepEqual(names(spec.containers), ["app"]);
  t.deepEqual(names(spec.initContainers), [INIT_CONTAINER, SIDECAR_CONTAINER, "migrate"]);
  t.is(container(spec, SIDECAR_CONTAINER, "initContainers").restartPolicy, "Always");
  t.is(container(spec, INIT_CONTAINER, "initContainers").restartPolicy, undefined);
  const sidecar = container(spec, SIDECAR_CONTAINER, "initContainers");
  t.deepEqual(sidecar.lifecycle.preStop.exec.command.slice(-2), ["drain", "--forever"]);
  t.deepEqual(sidecar.startupProbe.exec.command.slice(-2), ["wait-ready", "--timeout=0s"]);
  t.true(sidecar.args.includes("--exit-on-sigterm"));
});

test("modes › --no-native-sidecars: the classic sidecar before the app, init last", async (t) => {
  const spec = podSpecOf(await injected(podWith(), sourceOf(), CLASSIC));
  t.deepEqual(names(spec.containers), [SIDECAR_CONTAINER, "app"]);
  t.deepEqual(names(spec.initContainers), ["migrate", INIT_CONTAINER]);
  const sidecar = container(spec, SIDECAR_CONTAINER);
  t.is(sidecar.restartPolicy, undefined);
  t.false(sidecar.args.includes("--exit-on-sigterm"));
});

test("modes › the annotation wins over the flag, both ways", async (t) => {
  const native = podSpecOf(await injected(podWith("true"), sourceOf(), CLASSIC));
  t.deepEqual(names(native.containers), ["app"]);
  const classic = podSpecOf(await injected(podWith("false"), sourceOf()));
  t.deepEqual(names(classic.containers), [SIDECAR_CONTAINER, "app"]);
});

test("modes › an annotation that is neither true nor false refuses the injection", async (t) => {
  const r = await run(podWith("yes"), sourceOf());
  t.false(r.ok);
  if (!r.ok) {
    t.is(r.failure.code, "workload_invalid");
    t.regex(r.failure.message, /meshext\.io\/native-sidecars must be "true" or "false"/);
  }
});

for (const file of ["deployment.yaml", "job.yaml", "cronjob.yaml", "statefulset.json"]) {
  test(`modes › classic ${file}: injecting twice gives the same bytes as once`, async (t) => {
    const once = await injected(fixture(file), undefined, CLASSIC);
    t.is(await injected(once, undefined, CLASSIC), once);
  });
}

test("modes › re-injecting in the other mode moves the sidecar between the lists, and back", async (t) => {
  const native = await injected(podWith(), sourceOf());
  const classic = podSpecOf(await injected(native, sourceOf(), CLASSIC));
  t.deepEqual(names(classic.containers), [SIDECAR_CONTAINER, "app"]);
  t.deepEqual(names(classic.initContainers), [INIT_CONTAINER, "migrate"]);
  const back = podSpecOf(await injected(await injected(native, sourceOf(), CLASSIC), sourceOf()));
  t.deepEqual(names(back.containers), ["app"]);
  t.deepEqual(names(back.initContainers), [INIT_CONTAINER, SIDECAR_CONTAINER, "migrate"]);
});

test("modes › a pod injected by an earlier release loses its separate Envoy container and ConfigMap volume", async (t) => {
  // given the two-container injection of earlier releases (meshext-envoy + meshext-sidecar, ConfigMap meshext-envoy)
  const old =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n  - name: meshext-envoy\n    image: envoyproxy/envoy:v1.37.0\n  - name: meshext-sidecar\n    image: meshext/sidecar:0.1.0\n  - name: app\n    image: example/app:1\n  initContainers:\n  - name: meshext-init\n    image: kumahq/kuma-init:2.6.0\n  volumes:\n  - name: meshext-envoy-config\n    configMap:\n      name: meshext-envoy\n";
  // when injected again (classic, as they were), then one sidecar runs Envoy and the ConfigMap is gone
  const spec = podSpecOf(await injected(old, sourceOf(), CLASSIC));
  t.deepEqual(names(spec.containers), [SIDECAR_CONTAINER, "app"]);
  t.deepEqual(names(spec.volumes), ["meshext-tmp"]);
  t.deepEqual(container(spec, SIDECAR_CONTAINER).args.slice(-2), ["--", "envoy"]);
  t.is(await injected(await injected(old, sourceOf(), CLASSIC), sourceOf(), CLASSIC), await injected(old, sourceOf(), CLASSIC));
});
