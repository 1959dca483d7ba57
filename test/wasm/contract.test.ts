// wasm/contract.json (for the TypeScript side) and wasm/contract.ts (compiled into the filter) agree.
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CONTRACT } from "./fixtures.js";

const upperSnake = (camel: string): string => camel.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();

function sourceConstants(): Map<string, string> {
  const source = readFileSync(join(process.cwd(), "wasm", "contract.ts"), "utf8");
  const constants = new Map<string, string>();
  for (const match of source.matchAll(/export const ([A-Z0-9_]+): string = ("(?:[^"\\]|\\.)*");/g)) {
    constants.set(match[1]!, JSON.parse(match[2]!) as string);
  }
  return constants;
}

test("contract › every contract.json entry equals the wasm constant of the same name", (t) => {
  const constants = sourceConstants();
  for (const [key, value] of Object.entries(CONTRACT)) t.is(constants.get(upperSnake(key)), value, key);
});

test("contract › every wasm contract constant is in contract.json", (t) => {
  const jsonNames = new Set(Object.keys(CONTRACT).map(upperSnake));
  const missing = [...sourceConstants().keys()].filter((name) => !jsonNames.has(name));
  t.deepEqual(missing, []);
  t.true(sourceConstants().size >= 20);
});
