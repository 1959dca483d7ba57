// The control-plane clients as the sidecar builds them from its flags (from-config.ts), in process: who the dataplane is, what it registers, and the policy set it reads once registered.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { ConfigError } from "../../extproc/config/flags.js";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { silentLogger } from "../../extproc/log.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import { dataplaneClientFromConfig, dataplaneFromFile, dataplaneIdentity, httpPolicySourceFromConfig, localDataplane } from "../../extproc/policy-source/from-config.js";
import { call, controlPlaneFor, eventually } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";
import { sourceFor } from "./harness.js";

const config = (...args: string[]) => loadSidecarConfig(args, {}).config;

const mtp = (name: string, service: string, allow: string) => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name,
  spec: { targetRef: { kind: "MeshService", name: service }, from: [{ targetRef: { kind: "MeshService", name: allow }, default: { action: "Allow" } }] },
});

function tempFile(t: { teardown(fn: () => void): void }, name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-from-config-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

test("local dataplane › given no --dataplane-name and no service tag, when read, then the name is the host name and the service tag is the name", (t) => {
  const { dataplane, document } = localDataplane(config("--mesh", "shop", "--dataplane-tags", "version=v1"));
  t.is(dataplane.name, hostname());
  t.is(dataplane.mesh, "shop");
  t.deepEqual(dataplane.inbounds[0]!.tags, { "kuma.io/service": hostname(), version: "v1" });
  t.is(document, undefined);
});

test("local dataplane › given a service tag among --dataplane-tags, when read, then it is kept and no other is added", (t) => {
  const { dataplane } = localDataplane(config("--dataplane-name", "web-1", "--dataplane-tags", "version=v2,kuma.io/service=web"));
  t.is(dataplane.name, "web-1");
  t.deepEqual(dataplane.inbounds[0]!.tags, { "kuma.io/service": "web", version: "v2" });
});

test("local dataplane › given a --dataplane-file holding other documents too, when read, then its Dataplane is the one, registered as written with the mesh filled in", (t) => {
  const dp = { type: "Dataplane", name: "orders-1", labels: { team: "shop", app: "orders" }, networking: { address: "10.0.0.7", inbound: [{ port: 8080, tags: { "kuma.io/service": "orders" } }, { port: 9090, tags: { "kuma.io/service": "orders-admin" } }] } };
  const file = tempFile(t, "dp.yaml", `type: Mesh\nname: default\n---\n${JSON.stringify(dp)}\n`);
  const c = config("--dataplane-file", file, "--dataplane-address", "10.9.9.9");
  const local = localDataplane(c);
  t.is(local.dataplane.name, "orders-1");
  t.is(local.dataplane.mesh, "default");
  t.deepEqual(local.document, { ...dp, mesh: "default" });
  t.deepEqual(dataplaneIdentity(c, local), { mesh: "default", name: "orders-1", address: "", tags: {}, document: { ...dp, mesh: "default" } });
});

test("local dataplane › given --dataplane-tags, when its identity is built, then it carries --dataplane-address and the first inbound's tags", (t) => {
  const c = config("--dataplane-name", "web-1", "--dataplane-tags", "kuma.io/service=web,zone=a", "--dataplane-address", "10.1.2.3");
  const id = dataplaneIdentity(c, localDataplane(c));
  t.deepEqual(id, { mesh: "default", name: "web-1", address: "10.1.2.3", tags: { "kuma.io/service": "web", zone: "a" } });
});

test("dataplane file › given a file that is missing or holds no valid Dataplane, when read, then a ConfigError names the flag, the file and why", (t) => {
  const missing = join(tmpdir(), "meshext-no-such-dir", "dp.yaml");
  const gone = t.throws(() => dataplaneFromFile(missing), { instanceOf: ConfigError });
  t.true(gone!.message.startsWith(`--dataplane-file: cannot read ${missing}: `), gone!.message);
  const bad = tempFile(t, "bad.yaml", JSON.stringify({ type: "Dataplane", mesh: "default", name: "x", networking: { address: "127.0.0.1", inbound: [{ port: "nope" }] } }));
  const invalid = t.throws(() => dataplaneFromFile(bad), { instanceOf: ConfigError });
  t.regex(invalid!.message, new RegExp(`^--dataplane-file ${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: \\S+: `));
  const two = tempFile(t, "two.json", JSON.stringify({ type: "Dataplane", mesh: "default", name: "x", networking: { inbound: [{ port: "nope", tags: { "kuma.io/service": "x" } }, { port: 0, tags: { "kuma.io/service": "x" } }] } }));
  t.is(t.throws(() => dataplaneFromFile(two))!.message, `--dataplane-file ${two}: networking.inbound[0].port: must be an integer; networking.inbound[1].port: must be in inclusive range [1, 65535]`, "every violation, one after the other");
  const noDoc = tempFile(t, "none.yaml", "type: Mesh\nname: default\n");
  t.throws(() => dataplaneFromFile(noDoc), { instanceOf: ConfigError, message: /^--dataplane-file / });
});

test("from config › given no --control-plane, or --no-register, then there is no source or no lifecycle client; with both, there are", (t) => {
  const apply = () => {};
  const none = config("--dataplane-name", "a");
  t.is(httpPolicySourceFromConfig(none, apply, silentLogger(), new Registry()), undefined);
  t.is(dataplaneClientFromConfig(none, localDataplane(none), silentLogger()), undefined);
  const noRegister = config("--control-plane", "http://127.0.0.1:1", "--dataplane-name", "a", "--no-register");
  t.is(dataplaneClientFromConfig(noRegister, localDataplane(noRegister), silentLogger()), undefined);
  t.not(httpPolicySourceFromConfig(noRegister, apply, silentLogger(), new Registry()), undefined);
  const both = config("--control-plane", "http://127.0.0.1:1", "--dataplane-name", "a");
  t.not(dataplaneClientFromConfig(both, localDataplane(both), silentLogger()), undefined);
});

test("from config › given a --dataplane-file against Kuma, when the client registers and drains, then the document is PUT as written, then with every inbound NotReady", async (t) => {
  const kuma = await startFakeKuma();
  t.teardown(() => kuma.close());
  const dp = { type: "Dataplane", mesh: "default", name: "orders-1", networking: { address: "10.0.0.7", inbound: [{ port: 8080, tags: { "kuma.io/service": "orders" } }, { port: 9090, tags: { "kuma.io/service": "orders-admin" } }] } };
  const c = config("--control-plane", kuma.url, "--dataplane-file", tempFile(t, "dp.json", JSON.stringify(dp)), "--heartbeat-interval", "1s");
  const client = dataplaneClientFromConfig(c, localDataplane(c), silentLogger())!;
  t.teardown(() => client.stop());
  await client.register();
  t.deepEqual(kuma.dataplanes.get("default/orders-1"), dp);
  t.deepEqual(client.resource(), dp);
  // Kuma has no heartbeat endpoint: the first heartbeat (at draining) finds that out and drains by PUT
  await client.markDraining();
  t.true(await eventually(() => (kuma.dataplanes.get("default/orders-1") as typeof dp).networking.inbound.every((i) => (i as { state?: string }).state === "NotReady"), 5000));
  const drained = kuma.dataplanes.get("default/orders-1") as typeof dp;
  t.deepEqual(drained, { ...dp, networking: { ...dp.networking, inbound: dp.networking.inbound.map((i) => ({ ...i, state: "NotReady" })) } });
  t.deepEqual(dp.networking.inbound[0], { port: 8080, tags: { "kuma.io/service": "orders" } }, "the document itself is left as it was");
  await client.deregister();
  t.false(kuma.dataplanes.has("default/orders-1"));
});

test("from config › given --dataplane-tags and a control plane serving per-dataplane sets, when the source starts before the dataplane registers, then it reads the lists until registered and then only its own set", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const p of [mtp("on-a", "svc-a", "web"), mtp("on-b", "svc-b", "web")]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  const c = config("--control-plane", cp.url, "--dataplane-name", "a", "--dataplane-tags", "kuma.io/service=svc-a", "--heartbeat-interval", "1s");
  const local = localDataplane(c);
  const client = dataplaneClientFromConfig(c, local, silentLogger())!;
  const applied: Policy[][] = [];
  const source = httpPolicySourceFromConfig(c, (p) => void applied.push(p), silentLogger(), new Registry(), undefined, () => local.dataplane, () => client.resource())!;
  t.teardown(async () => {
    client.stop();
    await source.stop();
  });
  const names = () => (applied.at(-1) ?? []).map((p) => p.name).sort();
  // given the source started first: the dataplane is not registered, so the full lists are read
  await source.start();
  t.deepEqual(names(), ["on-a", "on-b"]);
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes/a")).status, 404);
  // when the dataplane registers (its inbound on the placeholder port, unlike the engine's)
  await client.register();
  // then the source moves to its own set: one policy, one long-poll held at the control plane
  t.true(await eventually(() => names().join() === "on-a", 10_000), JSON.stringify(names()));
  t.true(await eventually(async () => /meshext_control_plane_policy_set_waiters 1\b/.test(await (await fetch(`${cp.url}/metrics`)).text()), 10_000), "the source holds a policy-set long-poll");
  t.is(source.status.mode, "long-poll");
  // and an edit of its policy arrives through that long-poll
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-a", mtp("on-a", "svc-a", "orders"));
  t.true(await eventually(() => JSON.stringify(applied.at(-1)?.[0]).includes('"orders"'), 5000));
  t.deepEqual(names(), ["on-a"]);
});

test("policy set › given the served Dataplane's labels and tags in another key order than ours, when the source reads its set, then it is taken as ours", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const p of [mtp("on-a", "svc-a", "web"), mtp("on-b", "svc-b", "web")]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  const net = (tags: Record<string, string>) => ({ address: "127.0.0.1", inbound: [{ port: 8080, tags }] });
  const served = { type: "Dataplane", mesh: "default", name: "a", labels: { team: "shop", app: "orders", zone: "z1" }, networking: net({ version: "v1", "kuma.io/service": "svc-a", env: "prod" }) };
  const ours = { ...served, labels: { app: "orders", zone: "z1", team: "shop" }, networking: net({ "kuma.io/service": "svc-a", env: "prod", version: "v1" }) };
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/a", served)).status < 300, true);
  const dp = dataplaneFromObject(ours).dataplane!;
  const { source, names } = sourceFor(cp.url, { dataplane: () => dp });
  t.teardown(() => source.stop());
  await source.start();
  t.deepEqual(names(), ["on-a"], "the set selected for it, not the lists");
  t.is(source.status.mode, "long-poll");
});
