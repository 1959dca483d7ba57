// Builds the drain filter (release + debug) and the no-op baseline with the same flags, then
// prints the release size and fails the build when it is above the 24 KiB limit.
// The no-op module cannot use asconfig.json directly (asc always adds its "entries"), so its
// flags are derived here from asconfig.json's options + release target: one source of truth.
import { spawnSync } from "node:child_process";
import { readFileSync, statSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const SIZE_LIMIT_BYTES = 24 * 1024;
const root = process.cwd();
const asc = join(root, "node_modules", ".bin", "asc");
const asconfig = JSON.parse(readFileSync(join(root, "asconfig.json"), "utf8"));

function run(args) {
  const result = spawnSync(asc, args, { cwd: root, stdio: ["ignore", "inherit", "pipe"], encoding: "utf8" });
  // binaryen's "Last converge was suboptimal." is informational; anything else is shown.
  const stderr = (result.stderr ?? "").split("\n").filter((l) => l && !l.startsWith("Last converge")).join("\n");
  if (stderr) process.stderr.write(stderr + "\n");
  if (result.status !== 0) {
    console.error(`build-wasm: asc ${args.join(" ")} failed (exit ${result.status})`);
    process.exit(1);
  }
}

/** asconfig options → CLI flags (camelCase keys are asc's long option names). */
function flagsOf(options) {
  const flags = [];
  for (const [key, value] of Object.entries(options)) {
    if (key === "outFile" || key === "textFile") continue;
    if (value === false) continue;
    if (value === true) flags.push(`--${key}`);
    else if (Array.isArray(value)) for (const item of value) flags.push(`--${key}`, String(item));
    else flags.push(`--${key}`, String(value));
  }
  return flags;
}

mkdirSync(join(root, "build"), { recursive: true });
run(["--config", "asconfig.json", "--target", "release"]);
run(["--config", "asconfig.json", "--target", "debug"]);
run([
  "--config", "wasm/noop/asconfig.json",
  ...flagsOf({ ...asconfig.options, ...asconfig.targets.release }),
  "--outFile", "build/noop.wasm",
]);

const releaseFile = asconfig.targets.release.outFile;
const releaseBytes = statSync(join(root, releaseFile)).size;
const noopBytes = statSync(join(root, "build/noop.wasm")).size;
const kib = (bytes) => (bytes / 1024).toFixed(2);
const margin = SIZE_LIMIT_BYTES - releaseBytes;
const verdict = margin >= 0 ? `${margin} bytes under` : `${-margin} bytes OVER`;
console.log(`build-wasm: ${releaseFile} ${releaseBytes} bytes (${kib(releaseBytes)} KiB; ${verdict} the ${kib(SIZE_LIMIT_BYTES)} KiB limit)`);
console.log(`build-wasm: build/noop.wasm ${noopBytes} bytes (${kib(noopBytes)} KiB)`);
if (margin < 0) {
  console.error(`build-wasm: ${releaseFile} is ${-margin} bytes over the ${kib(SIZE_LIMIT_BYTES)} KiB (${SIZE_LIMIT_BYTES} bytes) limit; see wasm/README.md "Size" for what costs bytes`);
  process.exit(1);
}
