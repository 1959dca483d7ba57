// Which Kuma the sidecar follows: --kuma-version when pinned, else the control plane's API root
// (basedOnKuma, else version), else 2.14; an unsupported version is a clear ConfigError (exit 2: version-detect-cli.test.ts).
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError } from "../../extproc/config/flags.js";
import { resolveKumaVersion } from "../../extproc/policy-source/version-detect.js";
import { startTestControlPlane, tempDir } from "../control-plane/helpers.js";
import { rootServer } from "./fixtures.js";

const settings = (controlPlane: string, kumaVersion = "") => ({ controlPlane, kumaVersion, controlPlaneToken: "" });

test("kuma-version › given a pinned --kuma-version, when resolved, then the pin wins without asking the control plane", async (t) => {
  t.deepEqual(await resolveKumaVersion(settings("http://127.0.0.1:1", "v2.9.4")), { version: "2.9.4", from: "flag" });
});

test("kuma-version › given a control plane newer than 2.14 within 2.x, when resolved, then it follows 2.14", async (t) => {
  const url = await rootServer(t, { product: "Kuma", version: "2.15.0" });
  t.is((await resolveKumaVersion(settings(url))).version, "2.14");
});

test("kuma-version › given a policy directory and no pin, when resolved, then the semantics follow Kuma 2.14", async (t) => {
  t.deepEqual(await resolveKumaVersion(settings("")), { version: "2.14", from: "default" });
});

test("kuma-version › given a Kuma control plane reporting version 2.12.6, when resolved, then the semantics follow 2.12.6 (patch level kept)", async (t) => {
  const url = await rootServer(t, { hostname: "cp", product: "Kuma", version: "2.12.6", instanceId: "i", clusterId: "c", gui: "/gui" });
  t.deepEqual(await resolveKumaVersion(settings(url)), { version: "2.12.6", from: "control-plane", reported: "2.12.6" });
});

test("kuma-version › given a distribution reporting its own version and basedOnKuma, when resolved, then basedOnKuma decides", async (t) => {
  const url = await rootServer(t, { product: "Kong Mesh", version: "2.13.1", basedOnKuma: "2.13.1" });
  t.is((await resolveKumaVersion(settings(url))).version, "2.13.1");
});

test("kuma-version › given the embedded control plane, when resolved, then it reports and the sidecar follows 2.14.3", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  t.deepEqual(await resolveKumaVersion(settings(cp.url)), { version: "2.14.3", from: "control-plane", reported: "2.14.3" });
});

test("kuma-version › given a control plane reporting Kuma 3.0.0, when resolved, then the semantics follow the 3.0 preview", async (t) => {
  const url = await rootServer(t, { product: "Kuma", version: "3.0.0" });
  t.deepEqual(await resolveKumaVersion(settings(url)), { version: "3.0", from: "control-plane", reported: "3.0.0" });
});

for (const reported of ["4.0.0", "2.4.1", "0.0.0-preview.v9a8b7c"]) {
  test(`kuma-version › given a control plane reporting ${reported}, when resolved, then a ConfigError names the version and the flag`, async (t) => {
    const url = await rootServer(t, { product: "Kuma", version: reported });
    const err = await t.throwsAsync(resolveKumaVersion(settings(url)), { instanceOf: ConfigError });
    t.true(err!.message.includes(JSON.stringify(reported)) && err!.message.includes("--kuma-version"), err!.message);
  });
}

test("kuma-version › given an unreachable control plane, when resolved, then 2.14 is used with a warning that says how to pin", async (t) => {
  const r = await resolveKumaVersion(settings("http://127.0.0.1:1"), 1000);
  t.is(r.version, "2.14");
  t.is(r.from, "default");
  t.regex(r.warning!, /--kuma-version/);
});

/** A server whose GET / answers `status` with `body` as is, recording each request's headers. */
async function recordingRoot(t: { teardown(fn: () => Promise<void>): void }, status: number, body: string) {
  const headers: Array<Record<string, string | string[] | undefined>> = [];
  const server = createServer((req, res) => {
    headers.push(req.headers);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, headers };
}

const FOLLOWING = "; following Kuma 2.14 (pin with --kuma-version)";

test("kuma-version › given a control-plane token, when the API root is asked, then it carries the token and asks for JSON; without one, no authorization", async (t) => {
  const root = await recordingRoot(t, 200, JSON.stringify({ product: "Kuma", version: "2.12.6" }));
  await resolveKumaVersion({ controlPlane: root.url, kumaVersion: "", controlPlaneToken: "tok" });
  await resolveKumaVersion(settings(root.url));
  t.is(root.headers[0]!.authorization, "Bearer tok");
  t.is(root.headers[0]!.accept, "application/json");
  t.is(root.headers[1]!.authorization, undefined);
  t.is(root.headers[1]!.accept, "application/json");
});

test("kuma-version › given an API root that answers 503, then 2.14 with a warning naming the URL and the status", async (t) => {
  const root = await recordingRoot(t, 503, "{}");
  t.deepEqual(await resolveKumaVersion(settings(root.url)), { version: "2.14", from: "default", warning: `GET ${root.url}/ answered 503${FOLLOWING}` });
});

test("kuma-version › given an API root that answers 204 with no body, then 2.14 with a warning naming the URL and the status", async (t) => {
  const root = await recordingRoot(t, 204, "");
  t.deepEqual(await resolveKumaVersion(settings(root.url)), { version: "2.14", from: "default", warning: `GET ${root.url}/ answered 204${FOLLOWING}` });
});

test("kuma-version › given an API root without a version, or not JSON, then 2.14 with a warning that says what was wrong", async (t) => {
  const none = await recordingRoot(t, 200, JSON.stringify({ tagline: "not Kuma" }));
  t.deepEqual(await resolveKumaVersion(settings(none.url)), { version: "2.14", from: "default", warning: `GET ${none.url}/ reports no version (not a Kuma API root?)${FOLLOWING}` });
  const garbled = await recordingRoot(t, 200, "{ not json");
  const r = await resolveKumaVersion(settings(garbled.url));
  t.is(r.from, "default");
  t.true(r.warning!.startsWith(`GET ${garbled.url}/ failed: `) && r.warning!.endsWith(FOLLOWING), r.warning);
  t.false(r.warning!.includes("undefined"), r.warning);
  t.true(r.warning!.length > `GET ${garbled.url}/ failed: ${FOLLOWING}`.length, "the parse error's message is in it");
});

test("kuma-version › given a port nothing listens on, then the warning names the network error's code; given one fetch refuses, then its message", async (t) => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  const refused = await resolveKumaVersion(settings(`http://127.0.0.1:${port}`), 1000);
  t.is(refused.warning, `GET http://127.0.0.1:${port}/ failed: ECONNREFUSED${FOLLOWING}`);
  // port 1 is on fetch's list of bad ports: refused before any connection, with no error code
  const blocked = await resolveKumaVersion(settings("http://127.0.0.1:1"), 1000);
  t.is(blocked.warning, `GET http://127.0.0.1:1/ failed: fetch failed${FOLLOWING}`);
});
