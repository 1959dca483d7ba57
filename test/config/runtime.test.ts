// runtime › the sidecar's shipped Node options are one setting: Node accepts them in NODE_OPTIONS and applies
// them, envoy/Dockerfile's meshext image sets them, and `meshext inject` puts them and the measured resources
// on the sidecar container.
import test from "ava";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SIDECAR_NODE_OPTIONS, SIDECAR_RESOURCES } from "../../extproc/config/runtime.js";
import { renderSidecar } from "../../extproc/inject/render.js";
import { loadInjectSettings } from "../../extproc/inject/settings.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const OPTIONS = SIDECAR_NODE_OPTIONS.join(" ");

test("runtime › Node accepts the shipped options in NODE_OPTIONS and applies the semi-space size", (t) => {
  // given NODE_OPTIONS with the shipped flags; when node reports its young generation; then it starts and the space is at most 3 semi-spaces
  const r = spawnSync(process.execPath, ["-e", "console.log(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)"], { env: { ...process.env, NODE_OPTIONS: OPTIONS }, encoding: "utf8" });
  t.is(r.status, 0, r.stderr);
  const semiMiB = Number(/--max-semi-space-size=(\d+)/.exec(OPTIONS)?.[1]);
  t.true(Number(r.stdout) <= 3 * semiMiB * 1024 * 1024, `new space ${r.stdout.trim()} bytes`);
});

test("runtime › envoy/Dockerfile's meshext stage sets the same NODE_OPTIONS", (t) => {
  const dockerfile = readFileSync(join(ROOT, "envoy/Dockerfile"), "utf8");
  const stage = dockerfile.slice(dockerfile.indexOf("AS meshext"), dockerfile.indexOf("AS envoy"));
  t.true(stage.includes(`ENV NODE_OPTIONS="${OPTIONS}"`), "ENV NODE_OPTIONS line in the meshext stage");
});

test("runtime › meshext inject gives the sidecar container the options and the measured resources", (t) => {
  const { sidecar } = renderSidecar(loadInjectSettings([], {}).settings);
  t.deepEqual((sidecar.env as Array<{ name: string; value?: string }>).find((e) => e.name === "NODE_OPTIONS")?.value, OPTIONS);
  t.deepEqual(sidecar.resources, SIDECAR_RESOURCES);
});
