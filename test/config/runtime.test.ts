// runtime › the sidecar's shipped runtime settings are one setting: Node accepts the NODE_OPTIONS, envoy/Dockerfile's
// meshext image sets them on a glibc base (MALLOC_ARENA_MAX is glibc's), and `meshext inject` puts them and the measured resources on the
// sidecar container; and the image installs only the packages the compiled product imports.
import test from "ava";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
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

test("runtime › Node accepts the shipped NODE_OPTIONS, applies the semi-space size and exposes the collection the idle trim runs", (t) => {
  // given the shipped environment; when node reports its young generation and whether gc() exists
  const probe = "console.log(JSON.stringify({ young: require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size, gc: typeof gc }))";
  const r = spawnSync(process.execPath, ["-e", probe], { env: { ...process.env, ...SIDECAR_ENV }, encoding: "utf8" });
  // then it starts, the space is at most 3 semi-spaces, and extproc/idle-trim.ts finds its collection
  t.is(r.status, 0, r.stderr);
  const reported = JSON.parse(r.stdout) as { young: number; gc: string };
  const semiMiB = Number(/--max-semi-space-size=(\d+)/.exec(SIDECAR_ENV.NODE_OPTIONS ?? "")?.[1]);
  t.true(semiMiB > 0, "a semi-space size is shipped");
  t.true(reported.young <= 3 * semiMiB * 1024 * 1024, `new space ${reported.young} bytes`);
  t.is(reported.gc, "function");
});

test("runtime › envoy/Dockerfile's meshext stage sets every shipped variable, on a glibc base image", (t) => {
  // given the meshext stage of the Dockerfile; then each variable has its ENV line and the base is not musl (Alpine)
  const stage = meshextStage();
  for (const [name, value] of Object.entries(SIDECAR_ENV)) t.true(stage.includes(`ENV ${name}=${value.includes(" ") || value.startsWith("-") ? JSON.stringify(value) : value}`), `ENV ${name} in the meshext stage`);
  t.regex(stage, /^FROM node:\d+-slim AS meshext/);
  t.notRegex(stage, /alpine/i);
});

test("runtime › meshext inject gives the sidecar container the environment and at least the measured resources", (t) => {
  // given the default inject settings; when the sidecar container (meshext and its Envoy) is rendered; then it
  // carries each variable, and each request and limit covers the meshext sidecar's measured share
  const { sidecar } = renderSidecar(loadInjectSettings([], {}).settings);
  const env = sidecar.env as Array<{ name: string; value?: string }>;
  for (const [name, value] of Object.entries(SIDECAR_ENV)) t.is(env.find((e) => e.name === name)?.value, value, name);
  const resources = sidecar.resources as typeof SIDECAR_RESOURCES;
  for (const kind of ["requests", "limits"] as const) {
    for (const key of ["cpu", "memory"] as const) {
      t.true(parseFloat(resources[kind][key]) > parseFloat(SIDECAR_RESOURCES[kind][key]), `${kind}.${key}: ${resources[kind][key]} covers ${SIDECAR_RESOURCES[kind][key]} plus Envoy`);
    }
  }
});

/** Packages a compiled module imports (`import … from "x"`, `export … from "x"`, `import "x"`, `import("x")`), builtins left out. */
function importedPackages(source: string): string[] {
  const statements = /^(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|^import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;
  return [...source.matchAll(statements)]
    .map((m) => (m[1] ?? m[2] ?? m[3])!)
    .filter((s) => !s.startsWith(".") && !s.startsWith("/") && !s.startsWith("node:") && !builtinModules.includes(s.split("/")[0]!))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
}

test("runtime › the compiled product imports only package.json's dependencies, which is all the meshext image installs", (t) => {
  // given every compiled module of the product (dist/extproc, generated code included) and package.json
  const files = (readdirSync(join(ROOT, "dist/extproc"), { recursive: true }) as string[]).filter((f) => f.endsWith(".js"));
  t.true(files.length > 50);
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  // when their imports are collected
  const imported = new Set(files.flatMap((f) => importedPackages(readFileSync(join(ROOT, "dist/extproc", f), "utf8"))));
  t.true(imported.has("pino") && imported.has("@bufbuild/protobuf"), "the scan finds the product's imports");
  // then each is a run-time dependency, the gRPC library is a dev dependency only (~13 MiB of RSS when loaded),
  // and the meshext stage installs without dev dependencies
  t.deepEqual([...imported].filter((p) => !(p in pkg.dependencies)), []);
  t.false("@grpc/grpc-js" in pkg.dependencies);
  t.true("@grpc/grpc-js" in pkg.devDependencies);
  const dockerfile = readFileSync(join(ROOT, "envoy/Dockerfile"), "utf8");
  t.regex(dockerfile, /AS runtime-deps[\s\S]*RUN npm ci --omit=dev/);
  t.regex(meshextStage(), /COPY --from=runtime-deps \/meshext\/node_modules \.\/node_modules/);
});
