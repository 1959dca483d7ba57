// The control plane's intake of requests by turn (server.ts): a long-poll is taken in on a later turn, after the other requests read in the same turn; any other request is routed in the turn it arrives. Requests pipelined in one write are read in one turn, and a GET /metrics among them shows what was taken in by then.
import test from "ava";
import { connect } from "node:net";
import { controlPlaneFor } from "./helpers.js";

/** Sends `requests` on one connection in ONE write (so the server reads them in one turn); resolves with every byte answered. */
function pipelined(port: number, requests: string[]): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  let text = "";
  socket.on("data", (d: Buffer) => (text += d));
  socket.write(requests.join(""));
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.once("close", () => resolve(text));
  });
}

const get = (path: string, headers = "") => `GET ${path} HTTP/1.1\r\nHost: cp\r\n${headers}\r\n`;
const METRICS_LAST = "GET /metrics HTTP/1.1\r\nHost: cp\r\nConnection: close\r\n\r\n";
/** The value of the sample `series` in a Prometheus text answer, or undefined. */
const sample = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test("server long-poll intake › given a long-poll and a GET /metrics read in one turn, then the metrics are taken first: the long-poll is not held yet", async (t) => {
  // Given a control plane and the ETag of its (empty) MeshTrafficPermission list
  const { cp } = await controlPlaneFor(t);
  const list = await fetch(`${cp.url}/meshes/default/meshtrafficpermissions`);
  const etag = list.headers.get("etag")!;
  await list.arrayBuffer();
  // When a long-poll on that list (If-None-Match + wait) and a GET /metrics arrive in one write
  const text = await pipelined(cp.address.port, [
    get("/meshes/default/meshtrafficpermissions?wait=100ms", `If-None-Match: ${etag}\r\n`),
    METRICS_LAST,
  ]);
  // Then the long-poll ends unchanged (304), and the metrics, read in the turn both arrived, show no waiter yet
  t.regex(text, /^HTTP\/1\.1 304 /);
  t.is(sample(text, 'meshext_control_plane_long_poll_waiters{collection_kind="MeshTrafficPermission"}'), 0);
});

test("server long-poll intake › given an ordinary request and a GET /metrics read in one turn, then the request is routed in that turn, before the metrics are read", async (t) => {
  // Given a control plane with no Dataplane registered
  const { cp } = await controlPlaneFor(t);
  // When a decision-sample push for an unknown dataplane (refused as soon as it is routed) and a GET /metrics arrive in one write
  const body = "{}";
  const text = await pipelined(cp.address.port, [
    `POST /meshes/default/dataplanes/ghost/_decision-samples HTTP/1.1\r\nHost: cp\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    METRICS_LAST,
  ]);
  // Then the push is answered 404, and the metrics, read in the same turn, already count it
  t.regex(text, /^HTTP\/1\.1 404 /);
  t.is(sample(text, 'meshext_control_plane_decision_sample_pushes_total{result="unknown_dataplane"}'), 1);
});
