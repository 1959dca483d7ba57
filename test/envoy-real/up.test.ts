// `meshext up` (what `npm start` runs) with its real data plane: a request through the real Envoy with the web
// client certificate is allowed, bot's is denied 403, the banner's PUT flips web to denied, and SIGINT drains Envoy.
import test from "ava";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { call, eventually, startUp } from "../control-plane/helpers.js";
import { requireEnvoy } from "../helpers/real-envoy.js";

/** GET through Envoy's mTLS inbound with a client certificate; the status. */
function getWith(url: string, ca: string, cert: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: readFileSync(ca), cert: readFileSync(cert), key: readFileSync(key), agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

test("up › with an Envoy, the banner's curl lines go through it: web allowed, bot denied, the PUT denies web, Ctrl-C drains Envoy", async (t) => {
  if (!requireEnvoy(t)) return;
  // Given meshext up with its data plane on free ports
  const up = await startUp(t, ["--envoy", "on"], ["--inbound-port", "0", "--app-port", "0", "--envoy-admin-listen", "127.0.0.1:0", "--envoy-stats-listen", ""]);
  t.true(await eventually(() => up.banner().includes("Ctrl-C"), 30_000, 50), up.banner());
  const banner = up.banner();
  const inbound = /Envoy \(inbound mTLS\)\s+(https:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
  const certs = /throwaway certificates\s+(\S+)/.exec(banner)?.[1];
  const cpUrl = /control plane \(Kuma REST API\)\s+(http:\/\/\S+)/.exec(banner)?.[1];
  t.truthy(inbound && certs && cpUrl, banner);
  const put = /curl -s -XPUT (\S+) -H 'content-type: application\/yaml' --data-binary \$'(.*)'$/m.exec(banner);
  t.truthy(put, "the banner shows the PUT");
  const as = (who: string) => getWith(`${inbound}/`, `${certs}/ca.crt`, `${certs}/${who}.crt`, `${certs}/${who}.key`);

  // When web calls (its certificate is client.crt), then bot
  t.true(await eventually(async () => (await as("client")) === 200, 10_000, 100), "web is allowed through Envoy");
  t.is(await as("bot"), 403, "bot is denied by the sample MeshTrafficPermission");

  // When the banner's PUT is sent, then web is denied within seconds
  const yaml = put![2]!.replace(/\\n/g, "\n");
  const written = await call(cpUrl!, "PUT", put![1]!.slice(cpUrl!.length), yaml, { "content-type": "application/yaml" });
  t.true(written.status === 200 || written.status === 201, JSON.stringify(written.body));
  t.true(await eventually(async () => (await as("client")) === 403, 10_000, 100), "the PUT flips web to denied");

  // When Ctrl-C arrives, then Envoy's health check fails, its listeners drain, and up exits 0
  up.kill("SIGINT");
  t.is(await up.exited, 0);
  const log = up.stdout();
  t.regex(log, /"step":"envoy_healthcheck_fail","outcome":"ok"/);
  t.regex(log, /"step":"envoy_drain_listeners","outcome":"ok"/);
  t.regex(log, /"step":"stop_envoy","outcome":"ok"/);
});
