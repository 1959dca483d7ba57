// Loaded with --import by the mutation harness's workers (scripts/stryker-worker.mjs): the module hook that makes
// `import test from "ava"` in a test file load the harness's AVA stand-in (scripts/stryker-ava-shim.mjs).
import { register } from "node:module";

const shim = new URL("./stryker-ava-shim.mjs", import.meta.url).href;
const hooks = `export async function resolve(specifier, context, next) {
  return specifier === "ava" ? { url: ${JSON.stringify(shim)}, shortCircuit: true } : next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
