// runtime › the sidecar's shipped runtime settings belong to the program: Node accepts them, a long-running command
// started without them relaunches itself with them (an operator's own values kept, an opt-out honoured, the child
// never outliving the parent), envoy/Dockerfile and `meshext inject` do not repeat them (the image stays on a glibc
// base: MALLOC_ARENA_MAX is glibc's), and the image installs only the packages the compiled product imports.
import test from "ava";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { missingRuntimeSettings, SIDECAR_ENV, SIDECAR_NODE_FLAGS, SIDECAR_PROCESS_ENV, SIDECAR_RESOURCES } from "../../extproc/config/runtime.js";
import { eventually } from "../control-plane/helpers.js";
import { sidecarEnv } from "../helpers/sidecar-env.js";
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
  const r = spawnSync(process.execPath, ["-e", probe], { env: sidecarEnv(), encoding: "utf8" });
  // then it starts, the space is at most 3 semi-spaces, and extproc/idle-trim.ts finds its collection
  t.is(r.status, 0, r.stderr);
  const reported = JSON.parse(r.stdout) as { young: number; gc: string };
  const semiMiB = Number(/--max-semi-space-size=(\d+)/.exec(SIDECAR_ENV.NODE_OPTIONS ?? "")?.[1]);
  t.true(semiMiB > 0, "a semi-space size is shipped");
  t.true(reported.young <= 3 * semiMiB * 1024 * 1024, `new space ${reported.young} bytes`);
  t.is(reported.gc, "function");
});

test("runtime › envoy/Dockerfile's meshext stage does not repeat the settings (the program applies them), on a glibc base image", (t) => {
  // given the meshext stage of the Dockerfile; then no ENV line sets a runtime setting and the base is not musl (Alpine)
  const stage = meshextStage();
  for (const name of Object.keys(SIDECAR_ENV)) t.false(new RegExp(`^ENV ${name}\\b`, "m").test(stage), `ENV ${name} in the meshext stage`);
  const instructions = stage.split("\n").filter((l) => !l.trimStart().startsWith("#")).join("\n");
  for (const flag of SIDECAR_NODE_FLAGS) t.false(instructions.includes(flag), `${flag} in the meshext stage`);
  t.regex(stage, /^FROM node:\d+-slim AS meshext/);
  t.notRegex(stage, /alpine/i);
});

test("runtime › meshext inject gives the sidecar container at least the measured resources and leaves the settings to the program", (t) => {
  // given the default inject settings; when the sidecar container (meshext and its Envoy) is rendered; then it sets
  // none of the runtime variables (the meshext executable applies them), and each request and limit covers the
  // meshext sidecar's measured share
  const { sidecar } = renderSidecar(loadInjectSettings([], {}).settings);
  const env = sidecar.env as Array<{ name: string; value?: string }>;
  for (const name of Object.keys(SIDECAR_ENV)) t.is(env.find((e) => e.name === name), undefined, name);
  const resources = sidecar.resources as typeof SIDECAR_RESOURCES;
  for (const kind of ["requests", "limits"] as const) {
    for (const key of ["cpu", "memory"] as const) {
      t.true(parseFloat(resources[kind][key]) > parseFloat(SIDECAR_RESOURCES[kind][key]), `${kind}.${key}: ${resources[kind][key]} covers ${SIDECAR_RESOURCES[kind][key]} plus Envoy`);
    }
  }
});

test("runtime › missingRuntimeSettings adds only what is not given, and nothing when opted out or already relaunched", (t) => {
  t.deepEqual(missingRuntimeSettings({}, []), { env: { ...SIDECAR_PROCESS_ENV }, nodeFlags: [...SIDECAR_NODE_FLAGS] });
  t.is(missingRuntimeSettings({ ...SIDECAR_ENV }, []), undefined);
  t.is(missingRuntimeSettings({ MALLOC_ARENA_MAX: "1" }, ["--max-semi-space-size=4", "--expose-gc"]), undefined);
  // an operator's own values stay: only the options they did not give at all are added
  t.deepEqual(missingRuntimeSettings({ MALLOC_ARENA_MAX: "4", NODE_OPTIONS: "--max-semi-space-size=16" }, []), { env: {}, nodeFlags: ["--expose-gc"] });
  t.deepEqual(missingRuntimeSettings({ MALLOC_ARENA_MAX: "1" }, ["--expose_gc"]), { env: {}, nodeFlags: ["--max-semi-space-size=4"] });
  t.is(missingRuntimeSettings({ MESHEXT_RUNTIME_SETTINGS: "off" }, []), undefined);
  t.is(missingRuntimeSettings({ MESHEXT_RUNTIME_SETTINGS: "applied" }, []), undefined);
});

const CLI = join(ROOT, "dist/extproc/cli.js");
/** The environment of a user's shell: no runtime settings, no MESHEXT_* variables. */
const plainEnv = (extra: Record<string, string> = {}) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MESHEXT_") && k !== "MALLOC_ARENA_MAX" && k !== "NODE_OPTIONS")),
  ...extra,
});

/** Pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return Number(readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1]!.split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
const environ = (pid: number) => Object.fromEntries(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts `meshext sidecar` as a user would (plain `node dist/extproc/cli.js`), waiting for its "listening" line. */
async function startSidecar(t: { teardown(fn: () => void): void }, args: string[], env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, "sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--drain-min", "0s", "--drain-time", "1s", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  t.teardown(() => void child.kill("SIGKILL"));
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.resume();
  if (!(await eventually(() => out.includes('"msg":"listening"'), 30_000, 50))) throw new Error(`no listening line: ${out}`);
  return child;
}

const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on("exit", (code) => resolve(code))));

test("runtime › a sidecar started without the settings runs with them (relaunched), and passes on signals and its exit status", async (t) => {
  // Given `meshext sidecar` started from a plain shell environment
  const parent = await startSidecar(t, [], plainEnv());
  // Then the process serving is a child running with MALLOC_ARENA_MAX=1, --max-semi-space-size=4 and --expose-gc
  const [child] = childrenOf(parent.pid!);
  t.truthy(child, "a relaunched child");
  t.deepEqual(cmdline(child!).slice(1, 1 + SIDECAR_NODE_FLAGS.length), [...SIDECAR_NODE_FLAGS]);
  t.is(environ(child!).MALLOC_ARENA_MAX, "1");
  // When SIGTERM reaches the parent (kubelet, docker stop)
  parent.kill("SIGTERM");
  // Then the child drains and exits 0, and so does the parent
  t.is(await exitOf(parent), 0);
  t.false(alive(child!));
});

test("runtime › the relaunched child never outlives a parent killed with SIGKILL", async (t) => {
  const parent = await startSidecar(t, [], plainEnv());
  const [child] = childrenOf(parent.pid!);
  t.truthy(child);
  // When the parent is killed outright; then the child goes too
  parent.kill("SIGKILL");
  t.true(await eventually(() => !alive(child!) || readFileSync(`/proc/${child}/stat`, "utf8").split(") ")[1]!.startsWith("Z"), 10_000, 50), "the child exited");
});

test("runtime › an operator's own values are kept, and the opt-out (variable or argument) runs as started", async (t) => {
  // Given their own MALLOC_ARENA_MAX and semi-space size: only --expose-gc is added
  const own = await startSidecar(t, [], plainEnv({ MALLOC_ARENA_MAX: "4", NODE_OPTIONS: "--max-semi-space-size=16" }));
  const [child] = childrenOf(own.pid!);
  t.deepEqual(cmdline(child!).slice(1, 2), ["--expose-gc"]);
  t.is(environ(child!).MALLOC_ARENA_MAX, "4");
  own.kill("SIGKILL");
  // Given MESHEXT_RUNTIME_SETTINGS=off, or --no-runtime-settings: no relaunch, the process started is the sidecar
  for (const [args, env] of [[[], plainEnv({ MESHEXT_RUNTIME_SETTINGS: "off" })], [["--no-runtime-settings"], plainEnv()]] as const) {
    const plain = await startSidecar(t, [...args], env);
    t.deepEqual(childrenOf(plain.pid!), [], `no child with ${JSON.stringify(args)}`);
    t.false(cmdline(plain.pid!).includes("--expose-gc"));
    plain.kill("SIGKILL");
  }
});

/** Packages a compiled module imports (`import … from "x"`, `export … from "x"`, `import "x"`, `import("x")`; no string before the `from`, so text such as "'from' must" in an exported object is not one), builtins left out. */
function importedPackages(source: string): string[] {
  const statements = /^(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']|^import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;
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
