// The real `meshext webhook` process over real TLS on loopback, given real AdmissionReview v1 bodies for
// every supported kind: the JSONPatch it answers, applied to the object, gives exactly the bytes
// `meshext inject` prints for it; opt-outs are admitted unchanged; a refused injection follows the
// failure policy (Ignore: admitted with a warning; Fail: denied with the reason); bodies that are not
// AdmissionReviews are 400; a rotated certificate is served to new connections without a restart.
import test, { type ExecutionContext } from "ava";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:https";
import { fileURLToPath } from "node:url";
import jsonpatch from "fast-json-patch";
import { parse } from "yaml";
import { makeCert, opensslUnavailable, type TestCert } from "../helpers/tls-cert.js";
import { fixture, PATCH_DIR } from "../inject/helpers.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));
type Obj = Record<string, any>;

interface Webhook {
  port: number;
  cert: TestCert;
  child: ChildProcess;
  lines: Obj[];
}

async function startWebhook(t: ExecutionContext, args: string[] = []): Promise<Webhook | undefined> {
  const missing = opensslUnavailable();
  if (missing) {
    t.log(`skipped: ${missing}`);
    t.pass();
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), "meshext-webhook-"));
  const cert = makeCert("meshext-webhook.meshext-system.svc", dir);
  const child = spawn(process.execPath, [CLI, "webhook", "--listen=127.0.0.1:0", `--tls-cert-file=${cert.certFile}`, `--tls-key-file=${cert.keyFile}`, "--cert-check-interval=100ms", ...args], {
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.teardown(() => {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  const lines: Obj[] = [];
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  let buffered = "";
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`meshext webhook exited ${code}: ${stderr}`)));
    child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      buffered += c;
      for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
        const line = JSON.parse(buffered.slice(0, i)) as Obj;
        buffered = buffered.slice(i + 1);
        lines.push(line);
        if (line.msg === "listening") resolve(Number(String(line.address).split(":").pop()));
      }
    });
  });
  return { port, cert, child, lines };
}

function call(w: Webhook, method: string, path: string, body?: string, ca = w.cert.cert): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: w.port, method, path, ca, servername: "meshext-webhook.meshext-system.svc", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, fingerprint: (res.socket as import("node:tls").TLSSocket).getPeerCertificate().fingerprint256 }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function admissionReview(object: Obj, namespace = "shop", uid = randomUUID()): Obj {
  const kind = String(object.kind);
  const group = String(object.apiVersion).includes("/") ? String(object.apiVersion).split("/")[0] : "";
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group, version: String(object.apiVersion).split("/").pop(), kind },
      resource: { group, version: String(object.apiVersion).split("/").pop(), resource: kind.toLowerCase() + "s" },
      requestKind: { group, version: String(object.apiVersion).split("/").pop(), kind },
      namespace,
      operation: "CREATE",
      userInfo: { username: "system:serviceaccount:kube-system:replicaset-controller", groups: ["system:serviceaccounts"] },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    },
  };
}

async function reviewOf(w: Webhook, object: Obj, namespace?: string): Promise<Obj> {
  const body = admissionReview(object, namespace);
  const r = await call(w, "POST", "/inject", JSON.stringify(body));
  if (r.status !== 200) throw new Error(`status ${r.status}: ${r.body}`);
  const answer = JSON.parse(r.body) as Obj;
  if (answer.response.uid !== body.request.uid) throw new Error("uid not echoed");
  return answer;
}

function injectCli(text: string, args: string[] = []): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, "inject", ...args], { input: text, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const REPLICASET = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "web-7d4b9c6f5", namespace: "shop", labels: { app: "web" } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "web", image: "nginx:1.27", ports: [{ containerPort: 8080 }], readinessProbe: { httpGet: { path: "/healthz", port: 8080 } } }] },
    },
  },
};
const KINDS: [string, Obj][] = [
  ["Pod", parse(fixture("pod.yaml"))],
  ["Deployment", parse(fixture("deployment.yaml"))],
  ["StatefulSet", JSON.parse(fixture("statefulset.json"))],
  ["DaemonSet", parse(fixture("daemonset.yaml"))],
  ["ReplicaSet", REPLICASET],
  ["Job", parse(fixture("job.yaml"))],
  ["CronJob", parse(fixture("cronjob.yaml"))],
  ["Deployment with every probe kind", parse(fixture("probes.yaml"))],
];

test.serial("webhook › every supported kind: the JSONPatch gives the same bytes as meshext inject", async (t) => {
  const w = await startWebhook(t, [`--patches=${PATCH_DIR}`]);
  if (!w) return;
  for (const [kind, object] of KINDS) {
    // given the object as the API server sends it (namespace set, as it is once defaulted)
    const withNs = { ...object, metadata: { ...object.metadata, namespace: object.metadata.namespace ?? "shop" } };
    const answer = await reviewOf(w, withNs);
    t.is(answer.apiVersion, "admission.k8s.io/v1");
    t.is(answer.kind, "AdmissionReview");
    t.true(answer.response.allowed, kind);
    t.is(answer.response.patchType, "JSONPatch", kind);
    const ops = JSON.parse(Buffer.from(answer.response.patch, "base64").toString("utf8"));
    const patched = jsonpatch.applyPatch(structuredClone(withNs), ops, true, false).newDocument;
    // when meshext inject gets the same object; then the bytes are the same
    const cli = injectCli(JSON.stringify(withNs, null, 2) + "\n", [`--patches=${PATCH_DIR}`]);
    t.is(cli.code, 0, cli.stderr);
    t.is(JSON.stringify(patched, null, 2) + "\n", cli.stdout, kind);
  }
  t.true(w.lines.filter((l) => l.msg === "admission review" && l.result === "injected").length >= KINDS.length);
});

test.serial("webhook › a Pod without metadata.namespace is named in the request's namespace; re-review of an injected object patches nothing", async (t) => {
  const w = await startWebhook(t);
  if (!w) return;
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { generateName: "web-7d4b9c6f5-", labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx:1.27" }] } };
  const answer = await reviewOf(w, pod, "payments");
  const patched = jsonpatch.applyPatch(structuredClone(pod), JSON.parse(Buffer.from(answer.response.patch, "base64").toString()), true, false).newDocument as Obj;
  const sidecar = patched.spec.initContainers.find((c: Obj) => c.name === "meshext-sidecar");
  t.true(sidecar.args.includes("--dataplane-tags=kuma.io/service=web_payments_svc,k8s.kuma.io/namespace=payments,app=web"), sidecar.args.join(" "));
  const again = await reviewOf(w, patched, "payments");
  t.deepEqual(again.response, { uid: again.response.uid, allowed: true });
});

test.serial("webhook › opted-out and hostNetwork pods are admitted unchanged, with no patch", async (t) => {
  const w = await startWebhook(t);
  if (!w) return;
  const base = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "a", image: "a:1" }] } };
  for (const object of [
    { ...base, metadata: { name: "p", annotations: { "meshext.io/inject": "false" } } },
    { ...base, metadata: { name: "p", labels: { "sidecar.istio.io/inject": "false" } } },
    { ...base, metadata: { name: "p", annotations: { "kuma.io/sidecar-injection": "disabled" } } },
    { ...base, spec: { ...base.spec, hostNetwork: true } },
  ]) {
    const answer = await reviewOf(w, object);
    t.deepEqual(Object.keys(answer.response).sort(), ["allowed", "uid"], JSON.stringify(object.metadata));
    t.true(answer.response.allowed);
  }
  const deadline = Date.now() + 5000;
  while (w.lines.filter((l) => l.result === "skipped").length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.is(w.lines.filter((l) => l.result === "skipped").length, 4, "each logged as skipped");
});

test.serial("webhook › a refused injection: Ignore admits the pod unchanged with a warning; --failure-policy=Fail denies it with the reason", async (t) => {
  const conflicting = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "istio-proxy", image: "istio/proxyv2:1.24" }, { name: "a", image: "a:1" }] } };
  const missingPatch = { apiVersion: "v1", kind: "Pod", metadata: { name: "q", annotations: { "kuma.io/container-patches": "nope" } }, spec: { containers: [{ name: "a", image: "a:1" }] } };
  const ignore = await startWebhook(t);
  if (!ignore) return;
  for (const [object, reason] of [[conflicting, /already runs an Istio proxy/], [missingPatch, /ContainerPatch "nope": does not exist/]] as const) {
    const answer = await reviewOf(ignore, object);
    t.true(answer.response.allowed);
    t.is(answer.response.patch, undefined);
    t.regex(answer.response.warnings[0], reason);
  }
  const fail = await startWebhook(t, ["--failure-policy=Fail"]);
  if (!fail) return;
  const denied = await reviewOf(fail, conflicting);
  t.false(denied.response.allowed);
  t.is(denied.response.status.code, 403);
  t.regex(denied.response.status.message, /^meshext: not injecting Pod shop\/p|^meshext: not injecting Pod p/);
  t.regex(denied.response.status.message, /\[mesh_conflict\]$/);
});

test.serial("webhook › bodies that are not AdmissionReview v1 requests are 400; other routes and methods are refused; the webhook keeps serving", async (t) => {
  const w = await startWebhook(t);
  if (!w) return;
  const cases: [string, RegExp][] = [
    ["{not json", /not JSON/],
    ["[]", /must be a JSON object/],
    [JSON.stringify({ apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: { uid: "u", object: {} } }), /apiVersion must be "admission.k8s.io\/v1"/],
    [JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { object: {} } }), /request\.uid/],
    [JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: "u" } }), /request\.object/],
  ];
  for (const [body, message] of cases) {
    const r = await call(w, "POST", "/inject", body);
    t.is(r.status, 400, body);
    t.regex(JSON.parse(r.body).error, message);
  }
  t.is((await call(w, "GET", "/inject")).status, 405);
  t.is((await call(w, "POST", "/mutate", "{}")).status, 404);
  // targets `new URL` refuses on their own are answered, and the webhook keeps serving
  t.is((await call(w, "GET", "//")).status, 404);
  t.is((await call(w, "GET", "http://")).status, 400);
  t.is((await call(w, "GET", "/healthz")).status, 200);
  const metrics = await call(w, "GET", "/metrics");
  t.regex(metrics.body, /meshext_webhook_reviews_total\{result="bad_request"\} 5/);
  // a workload-free object is admitted as it is
  const cm = await reviewOf(w, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "b" } });
  t.deepEqual(cm.response, { uid: cm.response.uid, allowed: true });
});

test.serial("webhook › a rotated certificate is served to new connections without a restart; a half-written pair keeps the old one", async (t) => {
  const w = await startWebhook(t);
  if (!w) return;
  const first = await call(w, "GET", "/healthz");
  const fingerprintOf = (pem: string) => createHash("sha256").update(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64")).digest("hex").toUpperCase().match(/../g)!.join(":");
  t.is(first.fingerprint, fingerprintOf(w.cert.cert));
  // given a new certificate written over the old files: a new key first (a mismatched pair for a moment)
  const next = makeCert("meshext-webhook.meshext-system.svc", mkdtempSync(join(tmpdir(), "meshext-webhook-next-")));
  t.teardown(() => rmSync(next.dir, { recursive: true, force: true }));
  copyFileSync(next.keyFile, w.cert.keyFile);
  // the old certificate with the new key is not a pair: still the old one served
  await new Promise((r) => setTimeout(r, 300)); // three check intervals: the mismatch is seen and refused
  t.is((await call(w, "GET", "/healthz")).fingerprint, fingerprintOf(w.cert.cert));
  t.true(w.lines.some((l) => /do not make a usable pair/.test(String(l.msg))), "the mismatch is logged");
  copyFileSync(next.certFile, w.cert.certFile);
  // then new connections get it (waiting for the reload the log reports)
  const deadline = Date.now() + 10_000;
  while (!w.lines.some((l) => l.msg === "TLS certificate reloaded") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const after = await call(w, "GET", "/healthz", undefined, next.cert);
  t.is(after.status, 200);
  t.is(after.fingerprint, fingerprintOf(next.cert));
});

test("webhook › without certificate files it exits 2 with a readable message", (t) => {
  const r = spawnSync(process.execPath, [CLI, "webhook", "--listen=127.0.0.1:0"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  t.is(r.status, 2);
  t.regex(r.stderr, /--tls-cert-file and --tls-key-file are required/);
  const missing = spawnSync(process.execPath, [CLI, "webhook", "--listen=127.0.0.1:0", "--tls-cert-file=/nonexistent/tls.crt", "--tls-key-file=/nonexistent/tls.key"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  t.is(missing.status, 2);
  t.regex(missing.stderr, /cannot start: .*\/nonexistent\/tls\.(crt|key)/);
});
