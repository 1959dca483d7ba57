// Properties of the wasm drain filter's input readers, through the proxy-wasm emulator and the real .wasm:
// any plugin configuration is accepted or refused with one critical log line, and any /drain answer (body,
// status) leaves a filter that still serves requests — never a trap.
import test from "ava";
import fc from "fast-check";
import { existsSync } from "node:fs";
import { ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { drainBody, exchange, FILTER_WASM, startFilter } from "../wasm/fixtures.js";
import { budget } from "./budget.js";

const jsonish = fc.oneof(
  fc.string({ maxLength: 120 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        poll: fc.record({ cluster: fc.string({ maxLength: 8 }), path: fc.string({ maxLength: 8 }), periodMs: fc.oneof(fc.integer(), fc.double()), timeoutMs: fc.integer({ min: -5, max: 5000 }) }, { requiredKeys: [] }),
        health: fc.record({ path: fc.string({ maxLength: 8 }), answerWhenServing: fc.anything({ maxDepth: 1 }) }, { requiredKeys: [] }),
        drainingHeader: fc.string({ maxLength: 10 }),
        closeRampMs: fc.integer({ min: -10, max: 100_000 }),
        draining: fc.oneof(fc.boolean(), fc.string({ maxLength: 3 })),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
);

test("properties › wasm: any plugin configuration loads or is refused with one critical line, never a trap", (t) => {
  if (!existsSync(FILTER_WASM)) return t.fail(`${FILTER_WASM} is missing: run npm run build:wasm`);
  fc.assert(
    fc.property(jsonish, (config) => {
      const host = ProxyWasmHost.load(FILTER_WASM);
      const accepted = host.startPlugin(config);
      if (!accepted) return host.logs("critical").length === 1;
      const id = exchange(host);
      return host.logs("critical").length === 0 && id > 0;
    }),
    budget(150),
  );
  t.pass();
});

const drainAnswer = fc.oneof(
  fc.string({ maxLength: 120 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.tuple(fc.boolean(), fc.option(fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string({ maxLength: 25 }))), fc.option(fc.string({ maxLength: 25 }))).map(([d, s, e]) => drainBody(d, s, e)),
);

test("properties › wasm: any /drain answer leaves a filter that serves the next request, never a trap", (t) => {
  if (!existsSync(FILTER_WASM)) return t.fail(`${FILTER_WASM} is missing: run npm run build:wasm`);
  fc.assert(
    fc.property(fc.array(fc.tuple(drainAnswer, fc.constantFrom(200, 200, 200, 404, 500, 503)), { minLength: 1, maxLength: 4 }), (answers) => {
      const host = startFilter("");
      for (const [body, status] of answers) {
        host.advance(host.tickPeriodMs());
        const call = host.pendingHttpCalls()[0];
        if (!call) return false;
        host.respondHttpCall(call.token, { status, body });
        const id = exchange(host);
        if (id <= 0) return false;
      }
      return host.logs("critical").length === 0;
    }),
    budget(150),
  );
  t.pass();
});
