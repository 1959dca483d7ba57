// Sidecar modes: the flag sets the default, the meshext.io/native-sidecars annotation wins, a bad
// value refuses; native injection is idempotent; re-injecting in the other mode moves the sidecars.
import test from "ava";
import { ENVOY_CONTAINER, INIT_CONTAINER, SIDECAR_CONTAINER } from "../../extproc/inject/render.js";
import { container, fixture, injected, podSpecOf, run, sourceOf } from "./helpers.js";

type Obj = Record<string, any>;
const names = (list: Obj[] | undefined) => (list ?? []).map((c) => c.name);

function podWith(annotation?: string): string {
  const a = annotation === undefined ? "" : `  annotations:\n    meshext.io/native-sidecars: "${annotation}"\n`;
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n${a}spec:\n  initContainers:\n  - name: migrate\n    image: example/migrate:1\n  containers:\n  - name: app\n    image: example/app:1\n`;
}

test("modes › without flag or annotation: classic sidecars before the app, init last", async (t) => {
  const spec = podSpecOf(await injected(podWith(), sourceOf()));
  t.deepEqual(names(spec.containers), [ENVOY_CONTAINER, SIDECAR_CONTAINER, "app"]);
  t.deepEqual(names(spec.initContainers), ["migrate", INIT_CONTAINER]);
});

test("modes › --native-sidecars: init first, then Envoy and the sidecar with restartPolicy Always, then the workload's own inits", async (t) => {
  const spec = podSpecOf(await injected(podWith(), sourceOf(), ["--native-sidecars"]));
  t.deepEqual(names(spec.containers), ["app"]);
  t.deepEqual(names(spec.initContainers), [INIT_CONTAINER, ENVOY_CONTAINER, SIDECAR_CONTAINER, "migrate"]);
  for (const name of [ENVOY_CONTAINER, SIDECAR_CONTAINER]) t.is(container(spec, name, "initContainers").restartPolicy, "Always");
  t.is(container(spec, INIT_CONTAINER, "initContainers").restartPolicy, undefined);
  const sidecar = container(spec, SIDECAR_CONTAINER, "initContainers");
  t.deepEqual(sidecar.lifecycle.preStop.exec.command.slice(-2), ["drain", "--forever"]);
  t.deepEqual(sidecar.startupProbe.exec.command.slice(-2), ["wait-ready", "--timeout=0s"]);
});

test("modes › the annotation wins over the flag, both ways", async (t) => {
  const native = podSpecOf(await injected(podWith("true"), sourceOf()));
  t.deepEqual(names(native.containers), ["app"]);
  const classic = podSpecOf(await injected(podWith("false"), sourceOf(), ["--native-sidecars"]));
  t.deepEqual(names(classic.containers), [ENVOY_CONTAINER, SIDECAR_CONTAINER, "app"]);
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
  test(`modes › native ${file}: injecting twice gives the same bytes as once`, async (t) => {
    const once = await injected(fixture(file), undefined, ["--native-sidecars"]);
    t.is(await injected(once, undefined, ["--native-sidecars"]), once);
  });
}

test("modes › re-injecting in the other mode moves the sidecars between the lists, and back", async (t) => {
  const classic = await injected(podWith(), sourceOf());
  const native = podSpecOf(await injected(classic, sourceOf(), ["--native-sidecars"]));
  t.deepEqual(names(native.containers), ["app"]);
  t.deepEqual(names(native.initContainers), ["migrate", INIT_CONTAINER, ENVOY_CONTAINER, SIDECAR_CONTAINER]);
  const back = await injected(await injected(classic, sourceOf(), ["--native-sidecars"]), sourceOf());
  t.deepEqual(names(podSpecOf(back).containers), [ENVOY_CONTAINER, SIDECAR_CONTAINER, "app"]);
  t.deepEqual(names(podSpecOf(back).initContainers), ["migrate", INIT_CONTAINER]);
});
