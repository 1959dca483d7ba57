// Envoy's default close (END_STREAM + RST_STREAM per request) against Node's HTTP/2 rapid-reset
// limit: reproduced without the mitigation, and zero failures with the default connection rotation.
import test from "ava";
import { measureRapidReset } from "../../bench/rapid-reset.js";

const REQUESTS = 3000;

test("rapid reset › Envoy's RST close fails requests without rotation and none with the default rotation", async (t) => {
  // given 3 000 Envoy-shaped requests at 16 in flight on one connection, closed the Envoy way
  const rows = await measureRapidReset({ requests: REQUESTS, inFlight: [16], maxStreamsPerConnection: [0, 500] });
  const without = rows.find((r) => r.maxStreamsPerConnection === 0)!;
  const withRotation = rows.find((r) => r.maxStreamsPerConnection === 500)!;
  t.log(`failed per 1000: without rotation ${without.failedPer1000}, with rotation ${withRotation.failedPer1000}`);
  // then Node's GOAWAY(INTERNAL_ERROR) kills the streams in flight without rotation…
  t.true(without.failedPer1000 > 0, `expected the rapid-reset GOAWAY to fail requests: ${JSON.stringify(without.errors)}`);
  // …and the graceful GOAWAY every 500 streams keeps every request alive
  t.is(withRotation.failedPer1000, 0, JSON.stringify(withRotation.errors));
});
