// The per-request metric cells: what a request bumps in place is what a scrape of the registry shows, in
// Prometheus' text format (cumulative buckets, _sum, _count), never counted twice across scrapes.
import test from "ava";
import { Registry } from "prom-client";
import { HotCounter, HotHistogram } from "../../extproc/transport/hot-metrics.js";
import { promtoolCheckMetrics } from "../helpers/tools.js";

function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test("hot-metrics › counter cells show on every scrape with their running totals", async (t) => {
  // given a labelled counter and an unlabelled one
  const registry = new Registry();
  const byPhase = new HotCounter<"phase">({ name: "t_messages_total", help: "messages", labelNames: ["phase"], registers: [registry] });
  const opened = new HotCounter({ name: "t_opened_total", help: "opened", registers: [registry] });
  const headers = byPhase.cell({ phase: "request_headers" });
  // when cells are bumped, scraped, bumped again and scraped again
  headers.count += 3;
  opened.cell().count++;
  const first = await registry.metrics();
  headers.count += 2;
  byPhase.cell({ phase: "request_headers" }).count++;
  const second = await registry.metrics();
  // then each scrape shows the totals so far, and resolving a label set again gives the same cell
  t.is(sample(first, 't_messages_total{phase="request_headers"}'), 3);
  t.is(sample(first, "t_opened_total"), 1);
  t.is(sample(second, 't_messages_total{phase="request_headers"}'), 6);
  t.is(sample(second, "t_opened_total"), 1);
});

test("hot-metrics › histogram cells give cumulative buckets, +Inf, _sum and _count per label set", async (t) => {
  // given a histogram with buckets 0.001, 0.01, 0.1
  const registry = new Registry();
  const h = new HotHistogram<"phase">({ name: "t_duration_seconds", help: "duration", labelNames: ["phase"], buckets: [0.01, 0.001, 0.1], registers: [registry] });
  // when observations land below, on and above the bounds, for two label sets
  const a = h.cell({ phase: "a" });
  for (const v of [0.0005, 0.001, 0.005, 0.05, 2]) a.observe(v);
  h.cell({ phase: "b" }).observe(0.2);
  const text = await registry.metrics();
  // then bucket counts are cumulative with `le` inclusive, and the +Inf bucket equals _count
  t.is(sample(text, 't_duration_seconds_bucket{phase="a",le="0.001"}'), 2);
  t.is(sample(text, 't_duration_seconds_bucket{phase="a",le="0.01"}'), 3);
  t.is(sample(text, 't_duration_seconds_bucket{phase="a",le="0.1"}'), 4);
  t.is(sample(text, 't_duration_seconds_bucket{phase="a",le="+Inf"}'), 5);
  t.is(sample(text, 't_duration_seconds_count{phase="a"}'), 5);
  t.true(Math.abs(sample(text, 't_duration_seconds_sum{phase="a"}')! - 2.0565) < 1e-9);
  t.is(sample(text, 't_duration_seconds_bucket{phase="b",le="0.1"}'), 0);
  t.is(sample(text, 't_duration_seconds_bucket{phase="b",le="+Inf"}'), 1);
  t.true(text.includes("# TYPE t_duration_seconds histogram"));
  // and promtool, where installed, accepts the exposition
  const checked = promtoolCheckMetrics(text);
  if (checked === undefined) t.log("promtool not installed: format check skipped");
  else t.is(checked.status, 0, checked.output);
});

test("hot-metrics › reset empties histogram cells", async (t) => {
  // given a histogram with one observation
  const registry = new Registry();
  const h = new HotHistogram({ name: "t_reset_seconds", help: "h", labelNames: [], buckets: [1], registers: [registry] });
  h.cell().observe(0.5);
  // when the registry resets its metrics
  registry.resetMetrics();
  // then the cell counts from zero again
  t.is(sample(await registry.metrics(), 't_reset_seconds_count'), 0);
});
