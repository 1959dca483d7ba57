// Exit means exit: after "drain complete" the process ends even while admin TCP connections are open —
// idle ones that never sent a request and slow ones stuck mid-headers are closed after a bounded wait.
import test from "ava";
import { connect, type Socket } from "node:net";
import { spawnMeshext } from "../drain/meshext-process.js";
import { splitHostPort } from "../../extproc/host-port.js";

test("exit › given 5 idle and 1 slow admin connections, when the sidecar drains on SIGTERM, then it exits 0 within seconds of drain complete", async (t) => {
  // given a sidecar and admin connections that will never finish a request
  const proc = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--drain-min", "0s", "--drain-time", "1s"]);
  t.teardown(() => proc.child.kill("SIGKILL"));
  const listening = await proc.waitForLine((l) => l.msg === "listening", 30_000);
  const { host, port } = splitHostPort(String(listening.admin));
  const sockets: Socket[] = [];
  for (let i = 0; i < 6; i++) {
    const s = connect(port, host);
    s.on("error", () => {});
    await new Promise((r) => s.once("connect", r));
    sockets.push(s);
  }
  sockets[5]!.write("GET /ready HTTP/1.1\r\nHost: x\r\n"); // headers never finished
  t.teardown(() => sockets.forEach((s) => s.destroy()));
  // when
  proc.child.kill("SIGTERM");
  const complete = await proc.waitForLine((l) => l.msg === "drain complete", 20_000);
  // then
  const exit = await Promise.race([proc.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000))]);
  t.truthy(exit, "still alive 10 s after drain complete");
  t.is(exit?.code, 0);
  t.true(exit!.atMs - complete.receivedAtMs < 5000, `${exit!.atMs - complete.receivedAtMs} ms after drain complete`);
});
