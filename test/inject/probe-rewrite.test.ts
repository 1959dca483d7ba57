// The app's probes under injection: HTTP (named ports, headers, HTTPS), TCP and gRPC probes are
// rewritten to the sidecar's probe port and listed in its --app-probes, exactly the paths the real
// sidecar config accepts; exec probes and probes to another host stay as written; re-injection is
// byte-identical; the opt-out annotations (and --no-virtual-probes) restore the probes as they were.
import test from "ava";
import { parse, parseDocument } from "yaml";
import { loadRunConfig } from "../../extproc/commands/run.js";
import { parseProbeList } from "../../extproc/probes/virtual-path.js";
import { SIDECAR_CONTAINER } from "../../extproc/inject/render.js";
import { container, fixture, injected, podSpecOf, sourceOf } from "./helpers.js";

type Obj = Record<string, any>;
const TEMPLATE = ["spec", "template", "spec"];

test("probes › every network probe points at the probe port, the rest stay; the sidecar forwards exactly those paths", async (t) => {
  const spec = podSpecOf(await injected(fixture("probes.yaml"), sourceOf()), TEMPLATE);
  const api = container(spec, "api");
  const admin = container(spec, "admin");
  t.deepEqual(api.readinessProbe, { httpGet: { path: "/8080/ready?full=1", port: 9000, httpHeaders: [{ name: "X-Probe", value: "kubelet" }] }, periodSeconds: 2 }, "named port resolved, headers and timing kept");
  t.deepEqual(api.livenessProbe, { httpGet: { path: "/grpc/9090/liveness", port: 9000 }, failureThreshold: 5 });
  t.deepEqual(api.startupProbe, { httpGet: { path: "/tcp/8080", port: 9000 } });
  t.deepEqual(admin.readinessProbe, { httpGet: { path: "/https/8443/healthz", port: 9000 } }, "HTTPS becomes a plain HTTP probe to the sidecar");
  t.deepEqual(admin.livenessProbe, { exec: { command: ["cat", "/tmp/healthy"] } }, "exec probes run inside the app's container: untouched");
  t.deepEqual(admin.startupProbe, { httpGet: { path: "/", port: 80, host: "example.internal" } }, "a probe to another host does not pass the pod's proxy");
  // and the sidecar, started with the rendered flags, forwards exactly the rewritten paths
  const args = container(spec, SIDECAR_CONTAINER, "initContainers").args as string[];
  const { config } = loadRunConfig(args.slice(1, args.indexOf("--")), {});
  t.is(config.probeListen, "0.0.0.0:9000");
  const list = parseProbeList(config.appProbes);
  if (!list.ok) return t.fail(list.message);
  const rewritten = [api.readinessProbe, api.livenessProbe, api.startupProbe, admin.readinessProbe].map((p: Obj) => p.httpGet.path);
  t.deepEqual([...list.paths.keys()].sort(), rewritten.sort());
});

test("probes › injecting twice is byte-identical (a rewritten probe is recognised, not rewritten again)", async (t) => {
  const once = await injected(fixture("probes.yaml"), sourceOf());
  t.is(await injected(once, sourceOf()), once);
});

/** The text with one pod-template annotation set (through yaml's Document API, keeping the rest). */
function annotate(key: string, value: string): (text: string) => string {
  return (text) => {
    const doc = parseDocument(text);
    doc.setIn(["spec", "template", "metadata", "annotations", key], value);
    return doc.toString();
  };
}

for (const [how, change] of [
  ['annotation meshext.io/virtual-probes: "false"', annotate("meshext.io/virtual-probes", "false")],
  ["Kuma's kuma.io/virtual-probes: disabled", annotate("kuma.io/virtual-probes", "disabled")],
] as const) {
  test(`probes › ${how}: probes stay as written, no probe port; an already rewritten pod gets its probes back`, async (t) => {
    const optedOut = change(fixture("probes.yaml"));
    const spec = podSpecOf(await injected(optedOut, sourceOf()), TEMPLATE);
    const original = podSpecOf(optedOut, TEMPLATE);
    t.deepEqual(container(spec, "api").readinessProbe, container(original, "api").readinessProbe);
    const args = container(spec, SIDECAR_CONTAINER, "initContainers").args as string[];
    t.false(args.some((a) => a.startsWith("--probe-listen") || a.startsWith("--app-probes")));
    // given a pod injected with virtual probes, when it opts out and is injected again, then its probes are restored
    const rewritten = await injected(fixture("probes.yaml"), sourceOf());
    const restored = podSpecOf(await injected(change(rewritten), sourceOf()), TEMPLATE);
    const want = parse(fixture("probes.yaml")).spec.template.spec;
    t.deepEqual(container(restored, "api").livenessProbe, container(want, "api").livenessProbe);
    t.deepEqual(container(restored, "api").startupProbe, container(want, "api").startupProbe);
    t.deepEqual(container(restored, "admin").readinessProbe, container(want, "admin").readinessProbe);
    t.deepEqual(container(restored, "api").readinessProbe.httpGet, { path: "/ready?full=1", port: 8080, httpHeaders: [{ name: "X-Probe", value: "kubelet" }] }, "a named port comes back as its number");
  });
}

test("probes › --no-virtual-probes leaves every probe as written", async (t) => {
  const spec = podSpecOf(await injected(fixture("probes.yaml"), sourceOf(), ["--no-virtual-probes"]), TEMPLATE);
  const original = parse(fixture("probes.yaml")).spec.template.spec;
  for (const name of ["api", "admin"]) {
    for (const key of ["readinessProbe", "livenessProbe", "startupProbe"]) t.deepEqual(container(spec, name)[key], container(original, name)[key], `${name}.${key}`);
  }
});

test("probes › --probe-port moves the port everywhere: the probes, the sidecar flag, the container port; only the app port is redirected", async (t) => {
  const spec = podSpecOf(await injected(fixture("probes.yaml"), sourceOf(), ["--probe-port=9050"]), TEMPLATE);
  t.is(container(spec, "api").readinessProbe.httpGet.port, 9050);
  const sidecar = container(spec, SIDECAR_CONTAINER, "initContainers");
  t.true(sidecar.args.includes("--probe-listen=0.0.0.0:9050"));
  t.true(sidecar.ports.some((p: Obj) => p.containerPort === 9050 && p.name === "meshext-probes"));
  t.deepEqual(container(spec, "meshext-init", "initContainers").args, ["--app-port=8080", "--redirect-port=15006"], "only the app port is redirected: the probe port is reached directly");
});
