// Stryker's build step, run once in its sandbox (cwd): link the repository's node_modules and .meshext (the
// pinned Envoy; Stryker links node_modules only after the build, so it is told not to) and compile the instrumented sources with tsc, as `npm run build:ts` does. Usage: node scripts/stryker-build.mjs ROOT
import { execFileSync } from "node:child_process";
import { existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";

const root = process.argv[2];
if (!root) throw new Error("usage: node scripts/stryker-build.mjs ROOT");
for (const dir of ["node_modules", ".meshext"]) if (existsSync(join(root, dir)) && !existsSync(dir)) symlinkSync(join(root, dir), dir, "dir");
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], { stdio: "inherit" });
