// The Envoy series the alerts read (envoy_http_ext_proc_*) are the names a real Envoy exports: an Envoy whose ext_proc
// filter points at a dead sidecar port fails its requests, and its /stats/prometheus counts them under those names.
import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { eventually } from "../control-plane/helpers.js";
import { requireEnvoy } from "../helpers/real-envoy.js";
import { ALERTS_YML, DASHBOARD_JSON, type Yaml } from "./envoy-config.js";


/** Every envoy_http_ext_proc_* name in the alert rules and the dashboard. */
function extProcNamesUsed(): string[] {
  const alerts = parse(readFileSync(ALERTS_YML, "utf8")).groups.flatMap((g: Yaml) => g.rules.map((r: Yaml) => String(r.expr)));
  const panels = JSON.parse(readFileSync(DASHBOARD_JSON, "utf8")).panels.flatMap((p: Yaml) => (p.targets ?? []).map((q: Yaml) => String(q.expr)));
  return [...new Set([...alerts, ...panels].flatMap((e: string) => [...e.matchAll(/\benvoy_http_ext_proc_[a-z_]+/g)].map((m) => m[0])))].sort();
}

/** A loopback port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function bootstrap(sidecarPort: number): string {
  return JSON.stringify({
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: 0 } } },
    static_resources: {
      listeners: [
        {
          name: "inbound",
          address: { socket_address: { address: "127.0.0.1", port_value: 0 } },
          filter_chains: [
            {
              filters: [
                {
                  name: "envoy.filters.network.http_connection_manager",
                  typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
                    stat_prefix: "inbound",
                    route_config: { virtual_hosts: [{ name: "all", domains: ["*"], routes: [{ match: { prefix: "/" }, direct_response: { status: 200 } }] }] },
                    http_filters: [
                      {
                        name: "envoy.filters.http.ext_proc",
                        typed_config: {
                          "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor",
                          grpc_service: { envoy_grpc: { cluster_name: "meshext" }, timeout: "0.2s" },
                          message_timeout: "0.2s",
                          failure_mode_allow: false,
                        },
                      },
                      { name: "envoy.filters.http.router", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" } },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: "meshext",
          type: "STATIC",
          connect_timeout: "0.25s",
          typed_extension_protocol_options: {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": { "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions", explicit_http_config: { http2_protocol_options: {} } },
          },
          load_assignment: { cluster_name: "meshext", endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: sidecarPort } } } }] }] },
        },
      ],
    },
  });
}

test("envoy ext_proc stats › the envoy_http_ext_proc_* series the alerts read are what a real Envoy exports, and count a dead sidecar", async (t) => {
  t.timeout(60_000);
  const found = requireEnvoy(t);
  if (!found) return;
  const envoyBinary = found.path;
  const used = extProcNamesUsed();
  t.true(used.includes("envoy_http_ext_proc_streams_failed") && used.includes("envoy_http_ext_proc_message_timeouts"), used.join(", "));

  // Given a real Envoy whose ext_proc filter points at a sidecar port nothing listens on
  const dir = mkdtempSync(join(tmpdir(), "meshext-envoy-stats-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "envoy.json"), bootstrap(await deadPort()));
  const adminPath = join(dir, "admin-address");
  const envoy = spawn(envoyBinary, ["-c", join(dir, "envoy.json"), "--admin-address-path", adminPath, "--use-dynamic-base-id", "-l", "error"], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  envoy.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  t.teardown(() => void envoy.kill("SIGKILL"));
  const adminAddress = () => {
    try {
      return readFileSync(adminPath, "utf8").trim();
    } catch {
      return "";
    }
  };
  const ready = await eventually(async () => adminAddress() !== "" && (await fetch(`http://${adminAddress()}/ready`).then((r) => r.status === 200, () => false)), 30_000, 100);
  t.true(ready, `Envoy became ready: ${stderr}`);
  const admin = `http://${adminAddress()}`;
  const listeners = (await (await fetch(`${admin}/listeners?format=json`)).json()) as { listener_statuses: Array<{ local_address: { socket_address: { port_value: number } } }> };
  const port = listeners.listener_statuses[0]!.local_address.socket_address.port_value;

  // When three requests go through it
  for (let i = 0; i < 3; i++) t.is((await fetch(`http://127.0.0.1:${port}/`)).status, 500, "fail-closed ext_proc answers 500 without a sidecar");

  // Then its Prometheus output has every ext_proc series we read, and streams_failed counted the three
  const text = await (await fetch(`${admin}/stats/prometheus`)).text();
  const exported = new Set([...text.matchAll(/^# TYPE (envoy_http_ext_proc_[a-z_]+) counter$/gm)].map((m) => m[1]!));
  for (const name of used) t.true(exported.has(name), `Envoy exports ${name} (it has: ${[...exported].join(", ")})`);
  const value = (name: string) => Number(new RegExp(`^${name}\\{envoy_http_conn_manager_prefix="inbound"\\} (\\d+)$`, "m").exec(text)?.[1]);
  t.is(value("envoy_http_ext_proc_streams_failed"), 3);
  t.is(value("envoy_http_ext_proc_streams_started"), 3);
  t.is(value("envoy_http_ext_proc_message_timeouts"), 0);
});
