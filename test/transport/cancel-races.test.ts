// A stream the client resets while its request message is still being handled is counted as cancelled: a raw
// HTTP/2 RST_STREAM(CANCEL) right after a gRPC-framed ProcessingRequest, and grpc-js's call.cancel() right
// after its write, each 50 times over a real socket.
import test from "ava";
import { connect, constants as h2 } from "node:http2";
import { credentials, Metadata } from "@grpc/grpc-js";
import { ProcessingRequest } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { frameMessage } from "../../extproc/transport/grpc-wire.js";
import { PROCESS_PATH } from "../../extproc/transport/stream.js";
import { ExternalProcessorClient } from "../helpers/grpc-js-ext-proc.js";
import { startTestSidecar, type Harness } from "../helpers/sidecar-harness.js";

const STREAMS = 50;

/** request_headers of a GET (no body): the sidecar answers it and ends the call at once, racing the client's reset. */
const REQUEST_HEADERS = ProcessingRequest.fromPartial({
  request: { $case: "requestHeaders", requestHeaders: { headers: { headers: [{ key: ":path", rawValue: Buffer.from("/") }, { key: ":authority", rawValue: Buffer.from("svc") }] }, endOfStream: true } },
});

function counter(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ").pop()) : NaN;
}

async function streamCounts(h: Harness): Promise<{ opened: number; cancelled: number; ended: number }> {
  const text = await (await fetch(`${h.adminUrl}/metrics`)).text();
  return {
    opened: counter(text, "meshext_extproc_streams_opened_total"),
    cancelled: counter(text, "meshext_extproc_streams_cancelled_total"),
    ended: counter(text, "meshext_extproc_streams_ended_total"),
  };
}

/** Polls the counts until every stream has ended one way or another (or 5 s pass). */
async function settled(h: Harness): Promise<{ opened: number; cancelled: number; ended: number }> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const c = await streamCounts(h);
    if ((c.opened === STREAMS && c.cancelled + c.ended >= STREAMS) || Date.now() > deadline) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("cancel races › given 50 raw HTTP/2 streams, when each sends a request message then RST_STREAM(CANCEL), then all 50 are counted as cancelled", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const session = connect(`http://${h.grpcAddress}`);
  t.teardown(() => session.destroy());
  const frame = frameMessage(ProcessingRequest.encode(REQUEST_HEADERS).finish());

  // when each stream writes its one message and is reset with CANCEL at once
  await Promise.all(
    Array.from({ length: STREAMS }, () => new Promise<void>((resolve) => {
      const stream = session.request({ ":method": "POST", ":path": PROCESS_PATH, "content-type": "application/grpc", te: "trailers" });
      stream.on("error", () => {});
      stream.on("close", () => resolve());
      stream.write(frame, () => stream.close(h2.NGHTTP2_CANCEL));
    })),
  );

  // then the sidecar counts every one as cancelled and none as an OK end
  const c = await settled(h);
  t.deepEqual(c, { opened: STREAMS, cancelled: STREAMS, ended: 0 });
});

test("cancel races › given 50 grpc-js calls, when each writes a request message then cancels, then all 50 are counted as cancelled", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const client = new ExternalProcessorClient(h.grpcAddress, credentials.createInsecure());
  t.teardown(() => client.close());
  await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + 5000, (err) => (err ? reject(err) : resolve())));

  // when each call writes request_headers and cancels right after the write is handed to the socket
  await Promise.all(
    Array.from({ length: STREAMS }, () => new Promise<void>((resolve) => {
      const call = client.process(new Metadata());
      call.on("error", () => resolve());
      call.on("status", () => resolve());
      call.write(REQUEST_HEADERS, () => call.cancel());
    })),
  );

  // then the sidecar counts every one as cancelled and none as an OK end
  const c = await settled(h);
  t.deepEqual(c, { opened: STREAMS, cancelled: STREAMS, ended: 0 });
});

test("cancel races › given 50 grpc-js calls, when each writes a request message and half-closes, then all 50 are counted as ended", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const client = new ExternalProcessorClient(h.grpcAddress, credentials.createInsecure());
  t.teardown(() => client.close());

  // when each call writes request_headers, ends its side and reads the reply and the status
  const codes = await Promise.all(
    Array.from({ length: STREAMS }, () => new Promise<number>((resolve) => {
      const call = client.process(new Metadata());
      call.on("data", () => {});
      call.on("error", () => {});
      call.on("status", (s) => resolve(s.code));
      call.write(REQUEST_HEADERS);
      call.end();
    })),
  );

  // then every call finished with OK and the sidecar counts each as ended, none as cancelled
  t.deepEqual(codes, Array(STREAMS).fill(0));
  const c = await settled(h);
  t.deepEqual(c, { opened: STREAMS, cancelled: 0, ended: STREAMS });
});
