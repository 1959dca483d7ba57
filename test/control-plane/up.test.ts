// `meshext up` as a real child process: the control plane comes up seeded from envoy/policies/ (policies and the
// Mesh), the banner names every endpoint, the sidecar registers its dataplane, and SIGINT exits 0.
import test from "ava";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { call, eventually, tempDir } from "./helpers.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));

test("up › starts the seeded control plane and a sidecar that registers; SIGINT exits cleanly", async (t) => {
  const dir = await tempDir();
  const child = spawn(
    process.execPath,
    [CLI, "up", "--listen", "127.0.0.1:0", "--data-dir", join(dir.path, "cp"), "--", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--drain-min", "0", "--drain-time", "200"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  t.teardown(async () => {
    child.kill("SIGKILL");
    await exited;
    await dir.remove();
  });
  let banner = "";
  child.stderr.on("data", (c: Buffer) => (banner += c.toString()));
  t.true(await eventually(() => banner.includes("Ctrl-C"), 15_000), banner);
  const cpUrl = /control plane \(Kuma REST API\)\s+(http:\/\/\S+)/.exec(banner)![1]!;
  t.regex(banner, /sidecar admin\s+http:\/\/127\.0\.0\.1:\d+/);
  t.regex(banner, /sidecar ext_proc \(gRPC\)\s+127\.0\.0\.1:\d+/);
  t.regex(banner, /curl -s -XPOST http:\/\/127\.0\.0\.1:\d+\/explain/);

  const seeded = await call(cpUrl, "GET", "/meshtrafficpermissions");
  t.true(seeded.body.total >= 1, "seeded from envoy/policies/");

  t.truthy((await call(cpUrl, "GET", "/meshes/default")).body.mtls, "the sample Mesh (mTLS on) is seeded too");
  t.regex(banner, /_rules/, "the banner shows Kuma's inspect call");
  // The decision half (explain with an XFCC, a PUT changing the next decision) is readme-2.14.test.ts.
  const dps = await call(cpUrl, "GET", "/meshes/default/dataplanes");
  t.is(dps.body.items[0]?.status?.state, "online", "the sidecar registered its dataplane");
  child.kill("SIGINT");
  t.is(await exited, 0);
});
