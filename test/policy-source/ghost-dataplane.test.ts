// No ghost Dataplane: deregistering while the registration PUT is still in flight waits for that PUT and
// deletes after it, so a PUT that lands late never leaves the Dataplane registered after the sidecar left.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger } from "../../extproc/log.js";
import { createDataplaneClient } from "../../extproc/policy-source/dataplane-client.js";

const identity = { mesh: "default", name: "web-1", address: "127.0.0.1", tags: { "kuma.io/service": "web" } };

/** A control plane whose Dataplane PUTs take `putDelayMs` to land (stored only then); DELETE answers 404 for unknown ones. */
async function slowControlPlane(putDelayMs: number) {
  const stored = new Set<string>();
  const log: string[] = [];
  const server = createServer((req, res) => {
    const key = req.url ?? "";
    req.resume();
    req.on("end", () => {
      if (req.method === "PUT") {
        setTimeout(() => {
          stored.add(key);
          log.push("PUT landed");
          res.writeHead(201).end("{}");
        }, putDelayMs);
        return;
      }
      if (req.method === "DELETE") {
        const existed = stored.delete(key);
        log.push(`DELETE ${existed ? 200 : 404}`);
        res.writeHead(existed ? 200 : 404).end("{}");
        return;
      }
      res.writeHead(404).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stored, log, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test("ghost dataplane › given the registration PUT is in flight, when the sidecar deregisters, then the DELETE comes after the PUT and nothing stays registered", async (t) => {
  const cp = await slowControlPlane(400);
  t.teardown(() => cp.close());
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 60_000, log: silentLogger() });
  t.teardown(() => client.stop());
  // given
  const registering = client.register();
  await new Promise((r) => setTimeout(r, 50));
  // when
  await client.deregister();
  await registering;
  await new Promise((r) => setTimeout(r, 500)); // past the time a late PUT would land
  // then
  t.deepEqual(cp.log, ["PUT landed", "DELETE 200"]);
  t.is(cp.stored.size, 0, "no ghost Dataplane");
});

test("ghost dataplane › after deregistering, neither register() nor a heartbeat registers again", async (t) => {
  const cp = await slowControlPlane(0);
  t.teardown(() => cp.close());
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 30, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  await client.deregister();
  await client.register();
  await new Promise((r) => setTimeout(r, 200));
  t.is(cp.stored.size, 0);
});
