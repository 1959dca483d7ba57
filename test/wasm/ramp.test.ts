// The close ramp: the share of HTTP/1.x responses that get connection: close grows from 0 to 1 over
// closeRampMs after drain start, spreading the reconnect wave.
import test from "ava";
import { CONTRACT, closeResponses, drainBody, exchange, poll, startFilter } from "./fixtures.js";

const RAMP_MS = 10_000;

function closedOutOf(host: ReturnType<typeof startFilter>, requests: number): number {
  let closed = 0;
  for (let i = 0; i < requests; i++) {
    const id = exchange(host);
    if (host.responseHeader(id, "connection") === "close") closed++;
    host.completeHttpContext(id);
  }
  return closed;
}

/** A filter whose drain started `elapsedMs` before now (since given by the sidecar). */
function drainingFor(elapsedMs: number) {
  const host = startFilter({ closeRampMs: RAMP_MS });
  const since = new Date(host.process.clock.nowMs + host.tickPeriodMs() - elapsedMs).toISOString();
  poll(host, drainBody(true, since));
  return host;
}

const shares: Array<[number, number]> = [[0, 0], [2_500, 25], [5_000, 50], [7_500, 75], [10_000, 100], [60_000, 100]];

for (const [elapsedMs, expectedPercent] of shares) {
  test(`ramp › ${elapsedMs} ms into a ${RAMP_MS} ms ramp, ${expectedPercent}% of responses close`, (t) => {
    const host = drainingFor(elapsedMs);
    t.is(closedOutOf(host, 100), expectedPercent);
    t.is(closeResponses(host), expectedPercent);
  });
}

test("ramp › the share grows as time passes", (t) => {
  const host = drainingFor(1_000);
  const early = closedOutOf(host, 100);
  host.advance(8_000); // ticks keep the state; time moves on
  const late = closedOutOf(host, 100);
  t.is(early, 10);
  t.is(late, 90);
});

test("ramp › HTTP/2 responses never get connection: close; the close marker follows the ramp", (t) => {
  const host = drainingFor(RAMP_MS / 2);
  let marked = 0;
  for (let i = 0; i < 100; i++) {
    const id = exchange(host, { protocol: "HTTP/2" });
    t.is(host.responseHeader(id, "connection"), undefined);
    if (host.responseHeader(id, CONTRACT.closeHeader) === CONTRACT.closeHeaderValue) marked++;
    host.completeHttpContext(id);
  }
  t.is(marked, 50);
});
