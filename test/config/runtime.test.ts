// runtime › the sidecar's shipped runtime settings are one setting: Node accepts the NODE_OPTIONS, envoy/Dockerfile's
// meshext image sets them on a glibc base (MALLOC_ARENA_MAX is glibc's), and `meshext inject` puts them and the measured resources on the
// sidecar container.
import test from "ava";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SIDECAR_ENV, SIDECAR_RESOURCES } from "../../extproc/config/runtime.js";
import { renderSidecar } from "../../extproc/inject/render.js";
import { loadInjectSettings } from "../../extproc/inject/settings.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

function meshextStage(): string {
  const dockerfile = readFileSync(join(ROOT, "envoy/Dockerfile"), "utf8");
  const start = dockerfile.lastIndexOf("\nFROM", dockerfile.indexOf("AS meshext"));
  return dockerfile.slice(start + 1, dockerfile.indexOf("AS envoy"));
}

test("runtime › Node accepts the shipped NODE_OPTIONS and applies the semi-space size", (t) => {
  // given the shipped environment; when node reports its young generation; then it starts and the space is at most 3 semi-spaces
  const r = spawnSync(process.execPath, ["-e", "console.log(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)"], { env: { ...process.env, ...SIDECAR_ENV }, encoding: "utf8" });
  t.is(r.status, 0, r.stderr);
  const semiMiB = Number(/--max-semi-space-size=(\d+)/.exec(SIDECAR_ENV.NODE_OPTIONS ?? "")?.[1]);
  t.true(semiMiB > 0, "a semi-space size is shipped");
  t.true(Number(r.stdout) <= 3 * semiMiB * 1024 * 1024, `new space ${r.stdout.trim()} bytes`);
});

test("runtime › envoy/Dockerfile's meshext stage sets every shipped variable, on a glibc base image", (t) => {
  // given the meshext stage of the Dockerfile; then each variable has its ENV line and the base is not musl (Alpine)
  const stage = meshextStage();
  for (const [name, value] of Object.entries(SIDECAR_ENV)) t.true(stage.includes(`ENV ${name}=${value.includes(" ") || value.startsWith("-") ? JSON.stringify(value) : value}`), `ENV ${name} in the meshext stage`);
  t.regex(stage, /^FROM node:\d+-slim AS meshext/);
  t.notRegex(stage, /alpine/i);
});

test("runtime › meshext inject gives the sidecar container the environment and the measured resources", (t) => {
  // given the default inject settings; when the sidecar container is rendered; then it carries each variable and the resources
  const { sidecar } = renderSidecar(loadInjectSettings([], {}).settings);
  const env = sidecar.env as Array<{ name: string; value?: string }>;
  for (const [name, value] of Object.entries(SIDECAR_ENV)) t.is(env.find((e) => e.name === name)?.value, value, name);
  t.deepEqual(sidecar.resources, SIDECAR_RESOURCES);
});
