// Golden-file comparison for policy tests: UPDATE_GOLDEN=1 rewrites, a missing golden fails.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { ExecutionContext } from "ava";

export function assertGolden(t: ExecutionContext, file: string, actual: unknown): void {
  const text = JSON.stringify(actual, null, 2) + "\n";
  if (process.env.UPDATE_GOLDEN === "1") {
    writeFileSync(file, text);
    t.pass(`golden rewritten: ${file}`);
    return;
  }
  if (!existsSync(file)) {
    t.fail(`missing golden ${file}; run with UPDATE_GOLDEN=1 to create it, then review it`);
    return;
  }
  t.deepEqual(JSON.parse(text), JSON.parse(readFileSync(file, "utf8")));
}
