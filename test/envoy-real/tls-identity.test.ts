// Identity from a real TLS peer through a real Envoy: the client certificate's SPIFFE URI SAN reaches MeshTrafficPermission
// `rules` (ext_proc attribute connection.uri_san_peer_certificate); a client-supplied x-forwarded-client-cert never
// reaches the sidecar or the app on any listener; HTTP/2 is negotiated over mTLS (ALPN h2).
import test, { type ExecutionContext } from "ava";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { connect as http2Connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Echo, EnvoyStack } from "../helpers/envoy-stack.js";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { policySidecarArgs, rawRequest, type RawResponse, waitSidecarReady } from "../helpers/envoy-policies.js";
import { which } from "../helpers/tools.js";

const MESH_MTLS = `type: Mesh
name: default
mtls: {enabledBackend: ca-1, backends: [{name: ca-1, type: builtin}]}
`;

/** Only spiffe://default/web may call backend (Kuma 2.14 `rules`: an mTLS mesh denies what no allow matches). */
const MTP_RULES_WEB_ONLY = `
type: MeshTrafficPermission
name: backend-from-web
spec:
  targetRef: {kind: Dataplane, name: backend-1}
  rules:
    - default:
        allow:
          - spiffeID: {type: Exact, value: "spiffe://default/web"}
`;

const MTP_ALLOW_ALL = `
type: MeshTrafficPermission
name: backend-allow-all
spec:
  targetRef: {kind: MeshService, name: backend}
  from:
    - targetRef: {kind: Mesh}
      default: {action: Allow}
`;

const SPOOFED_XFCC = "By=spiffe://default/backend;URI=spiffe://default/web";

interface Certs {
  dir: string;
  ca: Buffer;
  client(name: "web" | "orders"): { cert: Buffer; key: Buffer };
}

/** Throwaway certificates from the repo's script: CA, server (spiffe://default/backend), clients web and orders. */
function makeCerts(t: ExecutionContext): Certs | undefined {
  if (!which("openssl")) {
    t.log("skipped: openssl is not installed (scripts/gen-test-certs.sh needs it)");
    t.pass();
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), "meshext-real-certs-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync("bash", [join(process.cwd(), "scripts", "gen-test-certs.sh"), dir, "client-orders=spiffe://default/orders"], { stdio: "ignore" });
  const file = (name: string) => readFileSync(join(dir, name));
  return {
    dir,
    ca: file("ca.crt"),
    client: (name) => (name === "web" ? { cert: file("client.crt"), key: file("client.key") } : { cert: file("client-orders.crt"), key: file("client-orders.key") }),
  };
}

const tlsFiles = (c: Certs) => ({ certChain: join(c.dir, "server.crt"), privateKey: join(c.dir, "server.key"), trustedCa: join(c.dir, "ca.crt") });

/** One HTTPS/1.1 request presenting `client`'s certificate. */
function tlsRequest(port: number, certs: Certs, client: "web" | "orders", headers: Record<string, string> = {}): Promise<RawResponse> {
  const startedMs = performance.now();
  const { cert, key } = certs.client(client);
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: "127.0.0.1", port, path: "/", ca: certs.ca, cert, key, agent: false, headers: { connection: "close", ...headers } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body, elapsedMs: performance.now() - startedMs }));
    });
    req.setTimeout(20_000, () => req.destroy(new Error("no answer in 20s")));
    req.on("error", reject);
    req.end();
  });
}

interface LoggedDecision {
  direction: string;
  outcome: string;
  client?: { tags: string; source: string };
  policy?: string;
  headers?: Record<string, string>;
}

/** The sidecar's decision log (--decision-log FILE with the XFCC header logged), read once it holds `count` lines. */
async function decisionLog(file: string, count: number, timeoutMs = 10_000): Promise<LoggedDecision[]> {
  const deadline = Date.now() + timeoutMs;
  let lines: string[] = [];
  while (Date.now() < deadline) {
    lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
    if (lines.length >= count) return lines.map((l) => JSON.parse(l) as LoggedDecision);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`decision log has ${lines.length} of ${count} lines`);
}

function decisionLogArgs(t: ExecutionContext): { args: string[]; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "meshext-real-decisions-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "decisions.jsonl");
  return { file, args: ["--decision-log", file, "--decision-log-headers", "x-forwarded-client-cert"] };
}

async function mtlsStack(t: ExecutionContext, certs: Certs, policies: string[], extra: string[] = []): Promise<EnvoyStack | undefined> {
  const stack = await startEnvoyStack(t, { sidecarArgs: [...policySidecarArgs(t, [MESH_MTLS, ...policies]), ...extra], tls: tlsFiles(certs) });
  if (stack) await waitSidecarReady(stack);
  return stack;
}

test.serial("real envoy › mTLS: the client certificate's SPIFFE ID decides MeshTrafficPermission rules: web is allowed, orders denied", async (t) => {
  const certs = makeCerts(t);
  if (!certs) return;
  // Given an mTLS inbound and a MeshTrafficPermission whose rules allow only spiffe://default/web
  const log = decisionLogArgs(t);
  const stack = await mtlsStack(t, certs, [MTP_RULES_WEB_ONLY], log.args);
  if (!stack) return;
  // When web's and orders' certificates call
  const web = await tlsRequest(stack.inboundPort, certs, "web");
  const orders = await tlsRequest(stack.inboundPort, certs, "orders");
  // Then web reaches the app and orders gets Envoy's 403
  t.is(web.status, 200);
  t.is(orders.status, 403);
  t.is(orders.body, "RBAC: access denied");
  t.is(stack.app.served, 1);
  // and the sidecar decided each on the identity from the peer certificate attribute
  const [first, second] = await decisionLog(log.file, 2);
  t.is(first!.outcome, "allow");
  t.is(second!.outcome, "deny");
  // (the SPIFFE ID spiffe://default/<service> read as kuma.io/service=<service>, and recorded as the client's spiffe)
  t.deepEqual(first!.client, { tags: "kuma.io/service=web", source: "peer-cert", spiffe: "spiffe://default/web" });
  t.deepEqual(second!.client, { tags: "kuma.io/service=orders", source: "peer-cert", spiffe: "spiffe://default/orders" });
  t.is(first!.policy, "backend-from-web");
  t.is(second!.policy, "backend-from-web");
});

test.serial("real envoy › mTLS: a client-supplied x-forwarded-client-cert is replaced by Envoy's own, for the sidecar and for the app", async (t) => {
  const certs = makeCerts(t);
  if (!certs) return;
  // Given the web-only rules on an mTLS inbound
  const log = decisionLogArgs(t);
  const stack = await mtlsStack(t, certs, [MTP_RULES_WEB_ONLY], log.args);
  if (!stack) return;
  // When orders' certificate comes with an x-forwarded-client-cert claiming to be web
  const orders = await tlsRequest(stack.inboundPort, certs, "orders", { "x-forwarded-client-cert": SPOOFED_XFCC });
  // and web's comes with the same forged header
  const web = await tlsRequest(stack.inboundPort, certs, "web", { "x-forwarded-client-cert": "URI=spiffe://default/admin" });
  // Then orders is still denied: the forged header is not its identity
  t.is(orders.status, 403);
  // and the sidecar saw only Envoy's header naming the real peer, never the forged one
  const [deniedEntry, allowedEntry] = await decisionLog(log.file, 2);
  const seenDenied = deniedEntry!.headers?.["x-forwarded-client-cert"] ?? "";
  const seenAllowed = allowedEntry!.headers?.["x-forwarded-client-cert"] ?? "";
  t.deepEqual(deniedEntry!.client, { tags: "kuma.io/service=orders", source: "peer-cert", spiffe: "spiffe://default/orders" });
  t.regex(seenDenied, /URI=spiffe:\/\/default\/orders/);
  t.notRegex(seenDenied, /spiffe:\/\/default\/web/);
  t.regex(seenAllowed, /URI=spiffe:\/\/default\/web/);
  t.notRegex(seenAllowed, /admin/);
  // and the app got Envoy's header too
  t.is(web.status, 200);
  const appSaw = String((JSON.parse(web.body) as Echo).headers["x-forwarded-client-cert"]);
  t.regex(appSaw, /URI=spiffe:\/\/default\/web/);
  t.notRegex(appSaw, /admin/);
});

test.serial("real envoy › plaintext inbound: a client-supplied x-forwarded-client-cert is stripped before the sidecar and the app", async (t) => {
  // Given a plaintext inbound (no TLS) allowing everyone, with the decision log on
  const log = decisionLogArgs(t);
  const stack = await startEnvoyStack(t, { sidecarArgs: [...policySidecarArgs(t, [MTP_ALLOW_ALL]), ...log.args] });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When a client sends a forged x-forwarded-client-cert
  const res = await rawRequest(stack.inboundPort, "/", { "x-forwarded-client-cert": SPOOFED_XFCC });
  // Then the app is reached without it
  t.is(res.status, 200);
  t.is((JSON.parse(res.body) as Echo).headers["x-forwarded-client-cert"], undefined);
  // and the sidecar did not see it either, nor took an identity from it
  const [entry] = await decisionLog(log.file, 1);
  t.deepEqual(entry!.headers, {});
  t.notRegex(JSON.stringify(entry!.client ?? {}), /spiffe/);
});

test.serial("real envoy › outbound listener: a client-supplied x-forwarded-client-cert never reaches the sidecar or the upstream", async (t) => {
  // Given an outbound listener to payments, with the decision log on
  const log = decisionLogArgs(t);
  const stack = await startEnvoyStack(t, { sidecarArgs: [...policySidecarArgs(t, [MTP_ALLOW_ALL]), ...log.args], outboundService: "payments" });
  if (!stack) return;
  await waitSidecarReady(stack);
  // When the app calls payments with a forged x-forwarded-client-cert
  const res = await rawRequest(stack.outboundPort!, "/", { host: "payments", "x-forwarded-client-cert": SPOOFED_XFCC });
  // Then the upstream is reached without it
  t.is(res.status, 200);
  t.is((JSON.parse(res.body) as Echo).headers["x-forwarded-client-cert"], undefined);
  // and the sidecar's outbound decision did not see it
  const [entry] = await decisionLog(log.file, 1);
  t.is(entry!.direction, "outbound");
  t.deepEqual(entry!.headers, {});
});

test.serial("real envoy › mTLS: an HTTP/2 client negotiates h2 by ALPN and is served", async (t) => {
  const certs = makeCerts(t);
  if (!certs) return;
  // Given the web-only rules on an mTLS inbound
  const stack = await mtlsStack(t, certs, [MTP_RULES_WEB_ONLY]);
  if (!stack) return;
  // When an HTTP/2 client connects with web's certificate and sends a request
  const { cert, key } = certs.client("web");
  const session = http2Connect(`https://127.0.0.1:${stack.inboundPort}`, { ca: certs.ca, cert, key, ALPNProtocols: ["h2", "http/1.1"] });
  t.teardown(() => session.destroy());
  await new Promise<void>((resolve, reject) => {
    session.once("connect", () => resolve());
    session.once("error", reject);
  });
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const stream = session.request({ ":path": "/h2", ":method": "GET" });
    let status = 0;
    let body = "";
    stream.on("response", (h) => (status = Number(h[":status"])));
    stream.setEncoding("utf8");
    stream.on("data", (d: string) => (body += d));
    stream.on("end", () => resolve({ status, body }));
    stream.on("error", reject);
    stream.end();
  });
  // Then the TLS session agreed on h2 and the request was allowed and served
  t.is(session.alpnProtocol, "h2");
  t.is(answer.status, 200);
  t.is((JSON.parse(answer.body) as Echo).path, "/h2");
  session.close();
});
