// runtime › the sidecar's shipped runtime settings are one setting: envoy/Dockerfile's meshext image sets them on a
// glibc base (MALLOC_ARENA_MAX is glibc's), and `meshext inject` puts them and the measured resources on the
// sidecar container.
import test from "ava";
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

test("runtime › the shipped environment is MALLOC_ARENA_MAX=1 and ships no V8 flag", (t) => {
  // given the one place the settings live; then it holds the measured glibc setting and nothing else
  t.deepEqual(SIDECAR_ENV, { MALLOC_ARENA_MAX: "1" });
});

test("runtime › envoy/Dockerfile's meshext stage sets every shipped variable, on a glibc base image", (t) => {
  // given the meshext stage of the Dockerfile; then each variable has its ENV line and the base is not musl (Alpine)
  const stage = meshextStage();
  for (const [name, value] of Object.entries(SIDECAR_ENV)) t.true(stage.includes(`ENV ${name}=${value}`), `ENV ${name}=${value} in the meshext stage`);
  t.regex(stage, /^FROM node:\d+-slim AS meshext/);
  t.notRegex(stage, /alpine/i);
  t.false(stage.includes("NODE_OPTIONS"), "no NODE_OPTIONS: no V8 flag is shipped");
});

test("runtime › meshext inject gives the sidecar container the environment and the measured resources", (t) => {
  // given the default inject settings; when the sidecar container is rendered; then it carries each variable and the resources
  const { sidecar } = renderSidecar(loadInjectSettings([], {}).settings);
  const env = sidecar.env as Array<{ name: string; value?: string }>;
  for (const [name, value] of Object.entries(SIDECAR_ENV)) t.is(env.find((e) => e.name === name)?.value, value, name);
  t.is(env.find((e) => e.name === "NODE_OPTIONS"), undefined);
  t.deepEqual(sidecar.resources, SIDECAR_RESOURCES);
});
