// Opt-outs and conflicts: meshext's, Kuma's and Istio's opt-outs (annotation or label) and hostNetwork
// pods pass through byte for byte with one note on stderr (exit 0); a pod another mesh's proxy already
// runs in is refused with a clear error (exit 1, nothing on stdout); a pod using a port the sidecar
// binds is refused naming the port.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import test from "ava";
import { run, sourceOf } from "./helpers.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));

function meshext(stdin: string) {
  const r = spawnSync(process.execPath, [CLI, "inject"], { input: stdin, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function pod({ annotations = {}, labels = {}, spec = "" }: { annotations?: Record<string, string>; labels?: Record<string, string>; spec?: string }): string {
  const a = Object.entries(annotations).map(([k, v]) => `    ${k}: "${v}"\n`).join("");
  const l = Object.entries(labels).map(([k, v]) => `    ${k}: "${v}"\n`).join("");
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  namespace: demo\n${a ? `  annotations:\n${a}` : ""}${l ? `  labels:\n${l}` : ""}spec:\n${spec}  containers:\n  - name: app\n    image: example/app:1\n`;
}

const OPT_OUTS: [string, string][] = [
  [pod({ annotations: { "meshext.io/inject": "false" } }), 'annotation meshext.io/inject: "false"'],
  [pod({ labels: { "meshext.io/inject": "disabled" } }), 'label meshext.io/inject: "disabled"'],
  [pod({ annotations: { "kuma.io/sidecar-injection": "disabled" } }), 'annotation kuma.io/sidecar-injection: "disabled"'],
  [pod({ labels: { "kuma.io/sidecar-injection": "false" } }), 'label kuma.io/sidecar-injection: "false"'],
  [pod({ annotations: { "sidecar.istio.io/inject": "false" } }), 'annotation sidecar.istio.io/inject: "false"'],
  [pod({ labels: { "sidecar.istio.io/inject": "false" } }), 'label sidecar.istio.io/inject: "false"'],
  [pod({ spec: "  hostNetwork: true\n" }), "hostNetwork: true"],
];

for (const [input, reason] of OPT_OUTS) {
  test(`opt-out › ${reason}: the pod passes through byte for byte, exit 0, one note on stderr`, (t) => {
    const r = meshext(input);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, input);
    t.is(r.stderr, `meshext inject: not injecting Pod demo/app: opted out (${reason}${reason.startsWith("hostNetwork") ? " (the pod shares the node's network; there is no pod traffic to redirect)" : ""}); written unchanged\n`);
  });
}

test("opt-out › in a List, only the opted-out workload is left alone", async (t) => {
  const list = JSON.stringify({
    apiVersion: "v1",
    kind: "List",
    items: [
      { apiVersion: "v1", kind: "Pod", metadata: { name: "in" }, spec: { containers: [{ name: "a", image: "a:1" }] } },
      { apiVersion: "v1", kind: "Pod", metadata: { name: "out", annotations: { "meshext.io/inject": "false" } }, spec: { containers: [{ name: "b", image: "b:1" }] } },
    ],
  });
  const r = await run(list, sourceOf());
  if (!r.ok) return t.fail(JSON.stringify(r.failure));
  t.deepEqual(r.injected, ["Pod in"]);
  t.deepEqual(r.skipped, [{ workload: "Pod out", reason: 'annotation meshext.io/inject: "false"' }]);
  const out = JSON.parse(r.output);
  t.deepEqual(out.items[1], JSON.parse(list).items[1]);
  t.is(out.items[0].spec.initContainers.length, 2);
});

test("opt-out › meshext.io/inject: \"true\" injects; a value that is none of true/enabled/false/disabled refuses", async (t) => {
  t.true((await run(pod({ annotations: { "meshext.io/inject": "true" } }), sourceOf())).ok);
  const r = await run(pod({ annotations: { "meshext.io/inject": "flase" } }), sourceOf());
  t.false(r.ok);
  if (!r.ok) t.regex(r.failure.message, /meshext\.io\/inject must be "true", "enabled", "false" or "disabled", got "flase"/);
});

const CONFLICTS: [string, string, RegExp][] = [
  ["a Kuma sidecar container", pod({ spec: "  initContainers:\n  - name: kuma-init\n    image: kumahq/kuma-init:2.14.0\n" }), /already runs a Kuma proxy \(container "kuma-init"\)/],
  ["an Istio proxy", pod({ spec: "" }).replace("  - name: app\n", "  - name: istio-proxy\n    image: istio/proxyv2:1.24\n  - name: app\n"), /already runs an Istio proxy \(container "istio-proxy"\)/],
  ["a Linkerd proxy", pod({ spec: "" }).replace("  - name: app\n", "  - name: linkerd-proxy\n    image: cr.l5d.io/linkerd/proxy:stable\n  - name: app\n"), /Linkerd proxy \(container "linkerd-proxy"\)/],
  ["Kuma's injected annotation", pod({ annotations: { "kuma.io/sidecar-injected": "true" } }), /already injected by Kuma \(annotation kuma\.io\/sidecar-injected\)/],
  ["Istio's status annotation", pod({ annotations: { "sidecar.istio.io/status": "{}" } }), /already injected by Istio/],
];

for (const [what, input, message] of CONFLICTS) {
  test(`conflict › ${what}: refused with a clear error, exit 1, nothing on stdout`, (t) => {
    const r = meshext(input);
    t.is(r.code, 1);
    t.is(r.stdout, "");
    t.regex(r.stderr, message);
    t.regex(r.stderr, /\[mesh_conflict\]\n$/);
    t.is(r.stderr.split("\n").length, 2, "one line");
  });
}

test("conflict › an opt-out wins over a foreign proxy: the pod is someone else's, left alone", (t) => {
  const input = pod({ annotations: { "kuma.io/sidecar-injection": "disabled" }, spec: "  initContainers:\n  - name: kuma-init\n    image: kumahq/kuma-init:2.14.0\n" });
  const r = meshext(input);
  t.is(r.code, 0);
  t.is(r.stdout, input);
});

test("conflict › an app on a port the sidecar binds is refused naming the port; the probe and stats ports move by flag", async (t) => {
  const onProbePort = pod({}).replace("    image: example/app:1\n", "    image: example/app:1\n    ports: [{containerPort: 9000}]\n");
  const r = await run(onProbePort, sourceOf());
  t.false(r.ok);
  if (!r.ok) {
    t.is(r.failure.code, "port_conflict");
    t.regex(r.failure.message, /the app uses port 9000/);
  }
  t.true((await run(onProbePort, sourceOf(), ["--probe-port=9010"])).ok);
  const onAdmin = await run(onProbePort.replace("9000", "9901"), sourceOf());
  t.false(onAdmin.ok, "Envoy's admin port is on loopback, but the pod shares one network namespace");
});
