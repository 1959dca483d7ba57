// envoy/docker-compose.yml and envoy/Dockerfile without Docker: what they reference exists, their ports and flags
// agree with envoy.yaml (flags go through the real flag parsers), and the seeder fills a real control plane.
import test from "ava";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONTROL_PLANE_FLAGS, loadControlPlaneConfig } from "../../extproc/config/control-plane.js";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { spawnMeshext } from "../drain/meshext-process.js";
import { E2E_SERVICES, EPHEMERAL_PORTS } from "../e2e/compose-env.js";
import { clusterAddress, COMPOSE_YAML, durationMs, ENVOY_DIR, envoyConfig, hcm, hostPort, httpFilter, listener, PROMETHEUS_YML, readYaml, ROOT, type Yaml } from "./envoy-config.js";

const compose = (): Yaml => readYaml(COMPOSE_YAML);
const dockerfile = (): string => readFileSync(join(ENVOY_DIR, "Dockerfile"), "utf8");
const portOf = (hostPortText: string): number => Number(hostPortText.slice(hostPortText.lastIndexOf(":") + 1));
/** Compose's `${VAR:-default}` interpolation, with `env` as the environment. */
const interpolate = (text: string, env: Record<string, string> = {}): string =>
  text.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] ?? fallback);
/** Container ports a service publishes ("8080:8080" → 8080), defaults interpolated. */
const published = (service: Yaml): number[] => (service.ports ?? []).map((p: string) => Number(interpolate(String(p)).split(":").pop()));
/** A Dockerfile COPY line: its flags (--from=, --chmod=), sources and destination. */
function copyLine(line: string): { flags: string[]; sources: string[]; dest: string } | undefined {
  if (!line.startsWith("COPY ")) return undefined;
  const words = line.slice(5).trim().split(/\s+/);
  const flags = words.filter((w) => w.startsWith("--"));
  const rest = words.filter((w) => !w.startsWith("--"));
  return { flags, sources: rest.slice(0, -1), dest: rest[rest.length - 1]! };
}

/** The Dockerfile stage named `name`: its FROM image and its lines. */
function stage(name: string): { from: string; lines: string[] } {
  const stages = dockerfile().split(/^(?=FROM )/m).filter((s) => s.startsWith("FROM "));
  const found = stages.find((s) => new RegExp(`^FROM \\S+ AS ${name}\\s`).test(s));
  if (!found) throw new Error(`envoy/Dockerfile has no stage ${name}`);
  return { from: found.split(/\s+/)[1]!, lines: found.split("\n") };
}

test("envoy › compose services build from envoy/Dockerfile stages that exist, in a context that exists", (t) => {
  for (const [name, service] of Object.entries<Yaml>(compose().services)) {
    if (!service.build) {
      t.regex(service.image, /^[\w./-]+:[\w.-]+$/, `${name}: image without a pinned tag`);
      t.notRegex(service.image, /:latest$/, name);
      continue;
    }
    const context = join(ENVOY_DIR, service.build.context);
    t.true(existsSync(join(context, "package.json")), `${name}: build context ${context} is not the repo root`);
    t.true(existsSync(join(context, service.build.dockerfile)), `${name}: no ${service.build.dockerfile}`);
    t.notThrows(() => stage(service.build.target), name);
  }
});

test("envoy › the Envoy image holds the pinned Envoy (envoy/ENVOY_VERSION, >= 1.37) and carries envoy.yaml and the built filter", (t) => {
  const envoy = stage("envoy");
  t.regex(envoy.from, /^debian:[\w.-]+$/, `a pinned Debian base: ${envoy.from}`);
  t.true(envoy.lines.some((l) => /^COPY --from=envoy-binary \/envoy \/usr\/local\/bin\/envoy$/.test(l)), "Envoy from the envoy-binary stage");
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(readFileSync(join(ROOT, "envoy/ENVOY_VERSION"), "utf8").trim());
  t.truthy(m, "envoy/ENVOY_VERSION is a release");
  t.true(Number(m![1]) > 1 || Number(m![2]) >= 37, "the Lua shim needs Envoy >= 1.37");
  const asconfig = JSON.parse(readFileSync(join(ROOT, "asconfig.json"), "utf8"));
  const text = envoy.lines.join("\n");
  t.regex(text, /^WORKDIR \/meshext$/m, "envoy.yaml's relative wasm path is resolved from the repo layout");
  const copies = envoy.lines.map(copyLine).filter((c) => c !== undefined);
  t.true(copies.some((c) => c.flags.includes("--from=build") && c.sources[0] === `/meshext/${asconfig.targets.release.outFile}` && c.dest === `./${asconfig.targets.release.outFile}`));
  t.true(copies.some((c) => c.sources[0] === "envoy/envoy.yaml" && c.dest === "./envoy/envoy.yaml"));
  t.regex(text, /CMD \["envoy", "-c", "envoy\/envoy\.yaml"/);
});

test("envoy › files the Dockerfile copies and the compose volumes mount exist", (t) => {
  for (const line of dockerfile().split("\n")) {
    const copy = copyLine(line);
    if (!copy || copy.flags.some((f) => f.startsWith("--from="))) continue;
    for (const src of copy.sources) if (src !== ".") t.true(existsSync(join(ROOT, src)), `Dockerfile copies missing ${src}`);
  }
  for (const [name, service] of Object.entries<Yaml>(compose().services)) {
    for (const volume of service.volumes ?? []) {
      const host = String(volume).split(":")[0]!;
      t.true(existsSync(join(ENVOY_DIR, host)), `${name}: mounts missing ${host}`);
    }
  }
  t.true(existsSync(join(ENVOY_DIR, "demo-app", "server.mjs")));
  t.true(existsSync(join(ENVOY_DIR, "load", "client.mjs")));
});

test("envoy › the sidecar's compose flags, read by the real flag parser, match envoy.yaml", (t) => {
  const envoy = envoyConfig();
  const sidecar = compose().services.sidecar;
  t.is(sidecar.network_mode, "service:envoy", "envoy.yaml reaches the sidecar on 127.0.0.1");
  t.is(sidecar.command[0], "sidecar");
  const { config } = loadSidecarConfig(sidecar.command.slice(1), {});
  t.is(config.grpcListen, hostPort(clusterAddress(envoy, "meshext_sidecar")));
  t.is(config.adminListen, hostPort(clusterAddress(envoy, "meshext_sidecar_admin")));
  t.is(new URL(config.envoyAdmin).port, String(envoy.admin.address.socket_address.port_value));
  t.is(config.inboundStatPrefix, hcm(listener(envoy, "inbound_8080")).stat_prefix);
  const extProc = httpFilter(listener(envoy, "inbound_8080"), "envoy.filters.http.ext_proc");
  t.is(config.messageTimeoutMs, durationMs(extProc.message_timeout));
  t.is(config.maxMessageTimeoutMs, durationMs(extProc.max_message_timeout));
  t.true(existsSync(join(ROOT, config.dataplaneFile)), `no ${config.dataplaneFile}`);
  t.true(durationMs(sidecar.stop_grace_period) > config.drainTimeMs + 2000, "Docker must not SIGKILL the sidecar mid-drain");
});

test("envoy › the control plane's compose flags, read by the real flag parser, match the sidecar and the published port", (t) => {
  const services = compose().services;
  const cpService = services["control-plane"];
  t.is(cpService.command[0], "control-plane");
  const { config } = loadControlPlaneConfig(cpService.command.slice(1), {});
  const defaultPort = portOf(CONTROL_PLANE_FLAGS.find((f) => f.key === "listen")!.default);
  t.is(portOf(config.listen), defaultPort);
  t.true(published(cpService).includes(defaultPort));
  t.truthy(config.token, "a non-loopback listener needs a token");
  const sidecar = loadSidecarConfig(services.sidecar.command.slice(1), {}).config;
  t.is(new URL(sidecar.controlPlane).port, String(defaultPort));
  t.is(sidecar.controlPlaneToken, config.token);
  t.is(services.seed.environment.CONTROL_PLANE, sidecar.controlPlane);
});

test("envoy › published ports, the app, the load client and Prometheus agree with envoy.yaml", (t) => {
  const envoy = envoyConfig();
  const services = compose().services;
  const inboundPort = listener(envoy, "inbound_8080").address.socket_address.port_value;
  t.true(published(services.envoy).includes(inboundPort));
  t.is(Number(services.app.environment.PORT), clusterAddress(envoy, "app_8080").port_value);
  t.is(services.app.network_mode, "service:envoy");
  t.is(new URL(services.load.environment.TARGET).port, String(inboundPort));
  t.is(services.prometheus.network_mode, "service:envoy", "Prometheus scrapes the loopback admin servers");
  const listen = services.prometheus.command.find((a: string) => a.startsWith("--web.listen-address="));
  t.true(published(services.envoy).includes(portOf(listen)));

  const jobs = new Map<string, Yaml>(readYaml(PROMETHEUS_YML).scrape_configs.map((j: Yaml) => [j.job_name, j]));
  t.is(jobs.get("envoy").metrics_path, "/stats/prometheus");
  t.deepEqual(jobs.get("envoy").static_configs[0].targets, [hostPort(envoy.admin.address.socket_address)]);
  t.is(jobs.get("meshext-sidecar").metrics_path, "/metrics");
  t.deepEqual(jobs.get("meshext-sidecar").static_configs[0].targets, [hostPort(clusterAddress(envoy, "meshext_sidecar_admin"))]);
  // The control plane is its own service: scraped by service name on the port its --listen names.
  const cpCommand: string[] = services["control-plane"].command;
  const cpListen = cpCommand[cpCommand.indexOf("--listen") + 1]!;
  t.is(jobs.get("meshext-control-plane").metrics_path, "/metrics");
  t.deepEqual(jobs.get("meshext-control-plane").static_configs[0].targets, [`control-plane:${portOf(cpListen)}`]);
});

test("envoy › the compose seeder puts every sample policy into a real control plane once", async (t) => {
  // Given a real control plane on a free port
  const dataDir = mkdtempSync(join(tmpdir(), "meshext-seed-"));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const cp = spawnMeshext(["control-plane", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--token", "t0ken"]);
  t.teardown(() => cp.child.kill("SIGKILL"));
  const url = String((await cp.waitForLine((l) => l.msg === "control plane listening", 30_000)).url);
  const seed = () => execFileSync(process.execPath, [join(ENVOY_DIR, "seed", "seed.mjs")], { env: { ...process.env, CONTROL_PLANE: url, CONTROL_PLANE_TOKEN: "t0ken" }, encoding: "utf8" });
  // When the seeder runs twice
  const first = seed();
  const second = seed();
  // Then the first run creates every sample resource (the Mesh and the policies) and the second keeps them
  const samples = readdirSync(join(ENVOY_DIR, "policies")).filter((f) => /\.ya?ml$/.test(f)).length;
  t.is(first.match(/^created /gm)?.length, samples, first);
  t.is(second.match(/^kept /gm)?.length, samples, second);
  const mtp = await (await fetch(`${url}/meshes/default/meshtrafficpermissions/backend-allow-web`)).json();
  t.is(mtp.name, "backend-allow-web");
});

test("envoy › files copied into the Envoy image are world-readable (--chmod), since Envoy runs as the non-root envoy user", (t) => {
  // The image runs Envoy as the `envoy` user: a file copied with the build host's 0600 mode is unreadable.
  const copies = stage("envoy").lines.map(copyLine).filter((c): c is NonNullable<typeof c> => c !== undefined && !c.flags.includes("--from=envoy-binary"));
  t.true(copies.length >= 2);
  for (const c of copies) t.true(c.flags.some((f) => /^--chmod=0?[0-7][4-7][4-7]$/.test(f)), `COPY ${c.sources.join(" ")}: no world-readable --chmod`);
  t.regex(dockerfile().split("\n")[0]!, /^# syntax=docker\/dockerfile:1\.\d+/, "COPY --chmod needs the BuildKit Dockerfile frontend");
});

test("envoy › the compose stack builds the meshext image once; the other services run that image without building or pulling it", (t) => {
  const services = Object.entries<Yaml>(compose().services);
  const builders = services.filter(([, s]) => s.build?.target === "meshext");
  t.deepEqual(builders.map(([name]) => name), ["control-plane"]);
  const image = builders[0]![1].image;
  const users = services.filter(([, s]) => s.image === image && !s.build);
  t.true(users.length >= 2, `only ${users.map(([n]) => n).join(", ")} reuse ${image}`);
  for (const [name, s] of users) t.is(s.pull_policy, "never", `${name}: ${image} is built here, never pulled`);
});

test("envoy › the e2e publishes every port on an ephemeral host port; the demo keeps its fixed ones", (t) => {
  const services = compose().services;
  for (const name of E2E_SERVICES) {
    for (const spec of (services[name]?.ports ?? []) as string[]) {
      const m = /^\$\{(\w+):-(\d+):(\d+)\}$/.exec(spec);
      t.truthy(m, `${name}: port ${spec} is not \${VAR:-host:container}`);
      if (!m) continue;
      t.is(m[2], m[3], `${name}: the demo publishes ${m[3]} on the same host port`);
      t.is(EPHEMERAL_PORTS[m[1]!], m[3], `${name}: the e2e does not set ${m[1]} to the bare container port`);
      t.is(interpolate(spec, EPHEMERAL_PORTS), m[3]);
    }
  }
});

test("envoy › every published host port of the compose stack, Grafana's included, can be moved with a MESHEXT_PUBLISH_* variable", (t) => {
  // Given a machine whose 3000, 8080 or 9090 is taken: each service's port is ${MESHEXT_PUBLISH_<NAME>:-host:container}
  for (const [name, service] of Object.entries(compose().services as Record<string, Yaml>)) {
    for (const spec of (service.ports ?? []) as string[]) t.regex(spec, /^\$\{MESHEXT_PUBLISH_\w+:-\d+:\d+\}$/, `${name}: ${spec}`);
  }
});
