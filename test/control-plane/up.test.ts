// `meshext up` as a real child process: the control plane comes up seeded from envoy/policies/ (policies and the
// Mesh), the banner names every endpoint, the sidecar registers its dataplane, and SIGINT exits 0.
import test from "ava";
import { call, eventually, startUp } from "./helpers.js";

test("up › starts the seeded control plane and a sidecar that registers; SIGINT exits cleanly", async (t) => {
  const up = await startUp(t);
  const banner = () => up.banner();
  t.true(await eventually(() => banner().includes("Ctrl-C"), 15_000), banner());
  const cpUrl = /control plane \(Kuma REST API\)\s+(http:\/\/\S+)/.exec(banner())![1]!;
  t.regex(banner(), /sidecar admin\s+http:\/\/127\.0\.0\.1:\d+/);
  t.regex(banner(), /sidecar ext_proc \(gRPC\)\s+127\.0\.0\.1:\d+/);
  t.regex(banner(), /curl -s -XPOST http:\/\/127\.0\.0\.1:\d+\/explain/);

  const seeded = await call(cpUrl, "GET", "/meshtrafficpermissions");
  t.true(seeded.body.total >= 1, "seeded from envoy/policies/");

  t.truthy((await call(cpUrl, "GET", "/meshes/default")).body.mtls, "the sample Mesh (mTLS on) is seeded too");
  t.regex(banner(), /_rules/, "the banner shows Kuma's inspect call");
  // The decision half (explain with an XFCC, a PUT changing the next decision) is readme-2.14.test.ts.
  const dps = await call(cpUrl, "GET", "/meshes/default/dataplanes");
  t.is(dps.body.items[0]?.status?.state, "online", "the sidecar registered its dataplane");
  up.kill("SIGINT");
  t.is(await up.exited, 0);
});
