// The decision log on a full disk (a real 64 KiB tmpfs mounted for the test): never a cut JSON line in the
// file, and every line is either written or counted as dropped — exactly.
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Registry } from "prom-client";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import type { Decision, RequestFacts } from "../../extproc/decision.js";
import { startDecisionLog } from "../../extproc/decision-log/recorder.js";
import { silentLogger } from "../../extproc/log.js";


const metric = async (registry: Registry, name: string, reason?: string) =>
  ((await registry.getSingleMetric(name)?.get())?.values ?? []).filter((v) => reason === undefined || v.labels.reason === reason).reduce((n, v) => n + v.value, 0);

test("decision log › given a disk that fills up, when many decisions are logged, then the file holds only whole lines and written + dropped = recorded", async (t) => {
  const dir = mountTmpfs(t, 64);
  if (!dir) {
    t.pass("skipped: no tmpfs (printed above)");
    return;
  }
  const registry = new Registry();
  const file = join(dir, "decisions.log");
  const { config } = loadSidecarConfig(["--decision-log", file, "--decision-log-buffer-bytes", String(1 << 20)], {});
  const recorder = (await startDecisionLog(config, registry, silentLogger()))!;
  const decision: Decision = { type: "continue", explain: { action: "allow", kind: "none", reason: "r".repeat(150) } };
  const recorded = 1500;
  for (let i = 0; i < recorded; i++) {
    const facts: RequestFacts = { direction: "inbound", method: "GET", path: `/p/${i}`, authority: "a", scheme: "http", headers: new Map(), peerUriSans: [], requestId: `r${i}` };
    recorder.record(facts, decision, 0.1);
    if (i % 100 === 0) await new Promise((r) => setImmediate(r));
  }
  await recorder.close();
  const text = readFileSync(file, "utf8");
  t.true(text === "" || text.endsWith("\n"), "the file ends with a whole line");
  const lines = text.split("\n").filter(Boolean);
  for (const line of lines) t.notThrows(() => JSON.parse(line), line.slice(0, 80));
  const written = await metric(registry, "meshext_decision_log_lines_total");
  const dropped = await metric(registry, "meshext_decision_log_dropped_total");
  t.true(dropped > 0, "the disk did fill up");
  t.is(written, lines.length, "every counted line is in the file");
  t.is(written + dropped, recorded, "every line is written or counted as dropped");
});
