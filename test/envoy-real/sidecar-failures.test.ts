// Failure modes with the shipped ext_proc settings (failure_mode_allow false, message_timeout 200ms where it matters, the gRPC health
// check and a 100% panic threshold) through a real Envoy: the sidecar never started, too slow, killed with requests in
// flight, restarted on the same ports. Envoy answers with the status the docs state and recovers without a restart.
import test from "ava";
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import type { ProcessingRequest, ProcessingResponse } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { continueRequestHeaders, continueResponseHeaders } from "../../extproc/transport/mapping.js";
import { startEnvoyStack, type EnvoyStack } from "../helpers/envoy-stack.js";
import { startChildSidecar } from "../helpers/child-sidecar.js";
import { ExternalProcessorService } from "../helpers/grpc-js-ext-proc.js";
import { pollUntil } from "../helpers/poll-until.js";
import { freePort } from "../helpers/prometheus.js";

async function get(stack: EnvoyStack, path = "/"): Promise<{ status: number; body: string }> {
  const res = await fetch(`${stack.inboundUrl}${path}`, { headers: { connection: "close" } });
  return { status: res.status, body: await res.text() };
}

test("real envoy › sidecar failures: a sidecar that never started fails every request closed with 500, and Envoy serves once it is up", async (t) => {
  // Given Envoy on the generated bootstrap, the sidecar's ports free (nobody listening)
  const [grpcPort, adminPort] = [await freePort(), await freePort()];
  const stack = await startEnvoyStack(t, { sidecarAddresses: { grpc: `127.0.0.1:${grpcPort}`, admin: `127.0.0.1:${adminPort}` } });
  if (!stack) return;
  // When a client calls
  const down = await get(stack);
  // Then Envoy fails closed: 500 from the ext_proc filter, the app never reached
  t.is(down.status, 500);
  t.is(stack.app.served, 0);
  // When the sidecar starts on those ports
  const child = await startChildSidecar(grpcPort, adminPort);
  t.teardown(() => void child.kill("SIGKILL"));
  // Then requests succeed again, with no Envoy restart
  await pollUntil("a request allowed", () => get(stack), (r) => r.status === 200, 15_000);
  t.true(stack.app.served >= 1);
});

test("real envoy › sidecar failures: a sidecar slower than message_timeout gets the client a 504, and a timely answer a 200", async (t) => {
  // Given a gRPC ext_proc server of ours that answers request_headers after `lateMs`, behind the generated bootstrap
  let lateMs = 600;
  const server = new Server();
  server.addService(ExternalProcessorService as never, {
    process: (call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>) => {
      call.on("data", (msg: ProcessingRequest) => {
        if (msg.request?.$case === "responseHeaders") call.write(continueResponseHeaders(undefined));
        if (msg.request?.$case !== "requestHeaders") return;
        setTimeout(() => {
          if (!call.cancelled) call.write(continueRequestHeaders(undefined, false, false));
        }, lateMs);
      });
      call.on("error", () => {});
      call.on("end", () => call.end());
    },
  });
  const grpcPort = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  t.teardown(() => void server.forceShutdown());
  const adminPort = await freePort();
  const stack = await startEnvoyStack(t, { sidecarAddresses: { grpc: `127.0.0.1:${grpcPort}`, admin: `127.0.0.1:${adminPort}` }, messageTimeoutMs: 200 });
  if (!stack) return;
  // When a request's decision takes 600 ms (message_timeout is 200 ms)
  const started = Date.now();
  const late = await get(stack);
  const tookMs = Date.now() - started;
  // Then Envoy answers 504 at the message timeout, without waiting for the decision or reaching the app
  t.is(late.status, 504);
  t.true(tookMs >= 180 && tookMs < 550, `took ${tookMs} ms`);
  t.is(stack.app.served, 0);
  // When the server answers in time again
  lateMs = 10;
  // Then the request is served
  t.is((await get(stack)).status, 200);
});

test("real envoy › sidecar failures: a sidecar killed (-9) with requests in flight fails them closed with 500, and a restart on the same ports recovers", async (t) => {
  // Given the real sidecar as a child process and 16 clients calling through Envoy without pause
  const [grpcPort, adminPort] = [await freePort(), await freePort()];
  let child = await startChildSidecar(grpcPort, adminPort);
  t.teardown(() => void child.kill("SIGKILL"));
  const stack = await startEnvoyStack(t, { sidecarAddresses: { grpc: `127.0.0.1:${grpcPort}`, admin: `127.0.0.1:${adminPort}` } });
  if (!stack) return;
  let phase: "before" | "down" | "after" = "before";
  const byPhase = { before: new Map<number, number>(), inFlight: new Map<number, number>(), down: new Map<number, number>(), after: new Map<number, number>() };
  let running = true;
  const clients = Array.from({ length: 16 }, async () => {
    while (running) {
      const startedIn = phase;
      const { status } = await get(stack).catch(() => ({ status: 0 }));
      // counted where it ended; the ones in flight at the kill started before it and ended after
      const endedIn = startedIn === "before" && phase !== "before" ? "inFlight" : phase;
      byPhase[endedIn].set(status, (byPhase[endedIn].get(status) ?? 0) + 1);
    }
  });
  await pollUntil("requests served", () => byPhase.before.get(200) ?? 0, (n) => n >= 50);
  // and 4 requests, already allowed, held at the app
  const held = Array.from({ length: 4 }, () => get(stack, "/?delay=1500").catch(() => ({ status: 0, body: "" })));
  await pollUntil("requests held at the app", () => stack.app.held, (n) => n === 4);
  // When the sidecar is stopped mid-load, so that every client's next request waits for its decision (well inside
  // message_timeout), and then killed with -9
  child.kill("SIGSTOP");
  await new Promise((r) => setTimeout(r, 60));
  phase = "down";
  child.kill("SIGKILL");
  await pollUntil("failures while down", () => [...byPhase.down].filter(([s]) => s !== 200).reduce((a, [, n]) => a + n, 0), (n) => n >= 20);
  // and restarted on the same ports
  child = await startChildSidecar(grpcPort, adminPort);
  phase = "after";
  await pollUntil("requests served again", () => byPhase.after.get(200) ?? 0, (n) => n >= 50, 15_000);
  running = false;
  await Promise.all(clients);
  const heldStatuses = (await Promise.all(held)).map((r) => r.status);
  t.log(JSON.stringify(Object.fromEntries([...Object.entries(byPhase)].map(([k, m]) => [k, Object.fromEntries(m)]))));
  // Then before the kill everything passed; the requests whose decision was pending at the kill failed closed with
  // Envoy's 500, and so did every request that failed while down (no other status, no connection error); the ones
  // already allowed and held at the app finished with 200; after the restart requests pass again, with the same Envoy
  t.deepEqual([...byPhase.before.keys()], [200]);
  t.true((byPhase.inFlight.get(500) ?? 0) >= 1, "a request waiting for its decision at the kill failed with 500");
  t.deepEqual([...byPhase.inFlight.keys()].filter((s) => s !== 200), [500]);
  t.deepEqual(heldStatuses, [200, 200, 200, 200], "requests allowed before the kill were served");
  t.deepEqual([...byPhase.down.keys()].filter((s) => s !== 200), [500]);
  t.is(byPhase.after.get(0), undefined);
  t.is(stack.envoy.process.exitCode, null);
});
