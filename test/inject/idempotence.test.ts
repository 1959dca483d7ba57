// Injecting an already-injected workload changes nothing, for every fixture and with patches.
import test from "ava";
import { fixture, injected, podYaml, sourceOf } from "./helpers.js";

for (const file of ["deployment.yaml", "pod.yaml", "job.yaml", "daemonset.yaml", "statefulset.json", "multi.yaml"]) {
  test(`inject › ${file}: injecting twice gives the same bytes as once`, async (t) => {
    const once = await injected(fixture(file), file === "deployment.yaml" ? undefined : sourceOf());
    const twice = await injected(once, file === "deployment.yaml" ? undefined : sourceOf());
    t.is(twice, once);
  });
}

test("inject › re-injection re-renders containers that were edited by hand", async (t) => {
  const once = await injected(podYaml(), sourceOf());
  const tampered = once.replace("image: meshext/sidecar:0.1.0", "image: meshext/sidecar:0.0.1");
  t.not(tampered, once);
  t.is(await injected(tampered, sourceOf()), once);
});

test("inject › re-injection with new settings updates the containers in place", async (t) => {
  const once = await injected(podYaml(), sourceOf());
  const again = await injected(once, sourceOf(), ["--sidecar-image=meshext/sidecar:0.2.0"]);
  t.is(again.match(/name: meshext-sidecar/g)?.length, 1);
  t.true(again.includes("image: meshext/sidecar:0.2.0"));
});

test("inject › re-injection leaves unchanged sidecars as they are, comments included", async (t) => {
  // given an injected pod where someone commented the sidecar container; when injected again with the
  // same settings; then nothing is rewritten (an equal container is not replaced, so its comment stays)
  const once = await injected(podYaml(), sourceOf());
  const commented = once.replace("    image: meshext/sidecar:0.1.0\n", "    # reviewed by ops\n    image: meshext/sidecar:0.1.0\n");
  t.not(commented, once);
  t.is(await injected(commented, sourceOf()), commented);
});
