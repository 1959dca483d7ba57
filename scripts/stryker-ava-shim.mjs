// The part of AVA's API our area test files use, for the in-process mutation harness (scripts/stryker-worker.mjs):
// `test(title, impl | macro, ...args)` and `test.macro` register tests instead of running them, and the execution
// context `t` implements AVA's assertions with AVA's meaning (a failed assertion throws; a test that asserts nothing
// fails; teardowns run last to first). Anything else AVA offers throws at registration, so a test file that needs it
// is noticed in the coverage pass instead of being run wrongly.
import { isDeepStrictEqual } from "node:util";

/** Every registered test, in registration order: { file, title, exec }. `file` is the test file being loaded. */
export const registered = [];
let loadingFile;
/** The test file whose import is under way: its tests register under this name. */
export function loadingTestFile(file) {
  loadingFile = file;
}

/** A failed assertion (the test fails with its message). */
export class AssertionFailed extends Error {}

const fail = (message) => {
  throw new AssertionFailed(message);
};
const show = (value) => {
  try {
    const text = typeof value === "string" ? JSON.stringify(value) : typeof value === "bigint" ? `${value}n` : JSON.stringify(value) ?? String(value);
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
  } catch {
    return String(value);
  }
};

/**
 * AVA's deep equality: same type and prototype, Object.is for primitives, own enumerable keys (strings and
 * symbols) of objects, arrays by index and length, Maps and Sets in insertion order, Dates by time, RegExps by
 * source and flags, Errors by name and message too.
 */
export function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return Object.is(a.getTime(), b.getTime());
  if (a instanceof RegExp) return a.source === b.source && a.flags === b.flags;
  if (ArrayBuffer.isView(a) || a instanceof ArrayBuffer) return isDeepStrictEqual(a, b);
  if (a instanceof Error && (a.name !== b.name || a.message !== b.message)) return false;
  if (a instanceof Map || a instanceof Set) {
    const ea = [...a.entries()];
    const eb = [...b.entries()];
    if (ea.length !== eb.length || !ea.every((e, i) => deepEqual(e, eb[i]))) return false;
  }
  if (Array.isArray(a) && a.length !== b.length) return false;
  const keys = (o) => [...Object.keys(o), ...Object.getOwnPropertySymbols(o).filter((s) => Object.prototype.propertyIsEnumerable.call(o, s))];
  const ka = keys(a);
  const kb = keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
}

/** AVA's t.like: every own enumerable property of `selector` is like the same property of `actual` (arrays: same length, element-wise). */
export function isLike(actual, selector) {
  const isObject = (v) => typeof v === "object" && v !== null && (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
  if (!isObject(selector)) return deepEqual(actual, selector);
  if (typeof actual !== "object" || actual === null) return false;
  if (Array.isArray(selector)) return Array.isArray(actual) && actual.length === selector.length && selector.every((s, i) => isLike(actual[i], s));
  return Object.keys(selector).every((k) => k in actual && isLike(actual[k], selector[k]));
}

/** Whether `error` meets a t.throws expectation ({ instanceOf, is, message, name, code, any }). */
function meetsExpectation(error, expectation) {
  if (expectation === undefined || expectation === null) return error instanceof Error;
  if (expectation.any) return true;
  if (!(error instanceof Error)) return false;
  if (expectation.instanceOf && !(error instanceof expectation.instanceOf)) return false;
  if ("is" in expectation && error !== expectation.is) return false;
  if (expectation.name !== undefined && error.name !== expectation.name) return false;
  if (expectation.code !== undefined && error.code !== expectation.code) return false;
  const m = expectation.message;
  if (typeof m === "string" && error.message !== m) return false;
  if (m instanceof RegExp && !m.test(error.message)) return false;
  if (typeof m === "function" && !m(error.message)) return false;
  return true;
}

/** An execution context for one run of one test: the assertions, teardowns and the assertion count. */
export function executionContext(title) {
  const teardowns = [];
  let assertions = 0;
  const ok = (passed, message) => {
    assertions++;
    if (!passed) fail(message);
  };
  const t = {
    title,
    context: {},
    passed: true,
    log() {},
    teardown(fn) {
      teardowns.push(fn);
    },
    pass() {
      assertions++;
    },
    fail(message = "Test failed via `t.fail()`") {
      ok(false, message);
    },
    assert(value, message = `${show(value)} is not truthy`) {
      ok(Boolean(value), message);
    },
    truthy(value, message = `${show(value)} is not truthy`) {
      ok(Boolean(value), message);
    },
    falsy(value, message = `${show(value)} is not falsy`) {
      ok(!value, message);
    },
    true(value, message = `${show(value)} is not true`) {
      ok(value === true, message);
    },
    false(value, message = `${show(value)} is not false`) {
      ok(value === false, message);
    },
    is(actual, expected, message = `${show(actual)} is not ${show(expected)}`) {
      ok(Object.is(actual, expected), message);
    },
    not(actual, expected, message = `${show(actual)} is ${show(expected)}`) {
      ok(!Object.is(actual, expected), message);
    },
    deepEqual(actual, expected, message = `${show(actual)} is not deeply equal to ${show(expected)}`) {
      ok(deepEqual(actual, expected), message);
    },
    notDeepEqual(actual, expected, message = `${show(actual)} is deeply equal to ${show(expected)}`) {
      ok(!deepEqual(actual, expected), message);
    },
    like(actual, selector, message = `${show(actual)} is not like ${show(selector)}`) {
      ok(isLike(actual, selector), message);
    },
    regex(string, regex, message = `${show(string)} does not match ${regex}`) {
      ok(typeof string === "string" && regex.test(string), message);
    },
    notRegex(string, regex, message = `${show(string)} matches ${regex}`) {
      ok(typeof string === "string" && !regex.test(string), message);
    },
    throws(fn, expectation, message) {
      try {
        fn();
      } catch (error) {
        ok(meetsExpectation(error, expectation), message ?? `threw ${show(error?.message ?? error)}, not as expected`);
        return error;
      }
      ok(false, message ?? "did not throw");
    },
    async throwsAsync(thrower, expectation, message) {
      try {
        await (typeof thrower === "function" ? thrower() : thrower);
      } catch (error) {
        ok(meetsExpectation(error, expectation), message ?? `rejected with ${show(error?.message ?? error)}, not as expected`);
        return error;
      }
      ok(false, message ?? "did not reject");
    },
    notThrows(fn, message) {
      try {
        fn();
      } catch (error) {
        ok(false, message ?? `threw ${show(error?.message ?? error)}`);
      }
      assertions++;
    },
    async notThrowsAsync(thrower, message) {
      try {
        await (typeof thrower === "function" ? thrower() : thrower);
      } catch (error) {
        ok(false, message ?? `rejected with ${show(error?.message ?? error)}`);
      }
      assertions++;
    },
  };
  return {
    t,
    assertionCount: () => assertions,
    /** Runs the teardowns, last registered first; the first error is rethrown after all ran. */
    async tearDown() {
      let first;
      for (const fn of teardowns.reverse()) {
        try {
          await fn();
        } catch (error) {
          first ??= error;
        }
      }
      if (first) throw first;
    },
  };
}

const unsupported = (name) => () => {
  throw new Error(`the mutation harness does not support test.${name} (scripts/stryker-ava-shim.mjs): run this file under AVA, or add it`);
};

/** `test(title, impl, ...args)`, `test(title, macro, ...args)` and `test(macro, ...args)` (the macro's title). */
function test(...argv) {
  const title0 = typeof argv[0] === "string" ? argv.shift() : undefined;
  const implementation = argv.shift();
  const args = argv;
  const exec = typeof implementation === "function" ? implementation : implementation?.exec;
  if (typeof exec !== "function") throw new Error(`test ${JSON.stringify(title0)}: no implementation`);
  const title = typeof implementation?.title === "function" ? implementation.title(title0, ...args) : title0;
  if (typeof title !== "string" || title === "") throw new Error("a test needs a title");
  if (!loadingFile) throw new Error(`test ${JSON.stringify(title)} registered outside a test file's import`);
  if (registered.some((r) => r.file === loadingFile && r.title === title)) throw new Error(`${loadingFile}: duplicate test title ${JSON.stringify(title)}`);
  registered.push({ file: loadingFile, title, exec: (t) => exec(t, ...args) });
}
test.macro = (macro) => macro;
// The harness runs a file's tests one at a time (stryker-worker.mjs), so every test is already serial.
test.serial = test;
for (const name of ["only", "skip", "todo", "failing", "before", "after", "beforeEach", "afterEach"]) test[name] = unsupported(name);

export default test;
