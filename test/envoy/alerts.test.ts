// envoy/prometheus/alerts.yml under promtool: the rules parse, their unit tests (alerts.test.yml: series in,
// alerts out) pass, every alert is tested and tells the operator what to do, and a broken rule makes them fail.
import test from "ava";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { which } from "../helpers/tools.js";
import { ALERTS_TEST_YML, ALERTS_YML, ROOT, type Yaml } from "./envoy-config.js";

interface Rule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const rulesOf = (doc: Yaml): Rule[] => doc.groups.flatMap((g: Yaml) => g.rules);

/** Runs `promtool test rules` over the shipped unit tests against `alertsText` (in a temp dir); exit code and output. */
function promtoolTestRules(promtool: string, alertsText: string): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "meshext-alerts-"));
  try {
    writeFileSync(join(dir, "alerts.yml"), alertsText);
    writeFileSync(join(dir, "alerts.test.yml"), readFileSync(ALERTS_TEST_YML, "utf8"));
    const run = spawnSync(promtool, ["test", "rules", "alerts.test.yml"], { cwd: dir, encoding: "utf8" });
    return { status: run.status, output: run.stdout + run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function promtoolCheckRules(promtool: string, alertsText: string): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "meshext-alerts-"));
  try {
    writeFileSync(join(dir, "alerts.yml"), alertsText);
    const run = spawnSync(promtool, ["check", "rules", "alerts.yml"], { cwd: dir, encoding: "utf8" });
    return { status: run.status, output: run.stdout + run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const promtool = which("promtool");
const alertsText = readFileSync(ALERTS_YML, "utf8");

test("alerts › every alert has a severity, a summary and a description, and a unit test in which it fires", (t) => {
  const rules = rulesOf(parse(alertsText));
  t.true(rules.length >= 14);
  const tests = parse(readFileSync(ALERTS_TEST_YML, "utf8"));
  const firing = new Set<string>(tests.tests.flatMap((u: Yaml) => (u.alert_rule_test ?? []).filter((c: Yaml) => (c.exp_alerts ?? []).length > 0).map((c: Yaml) => c.alertname)));
  for (const rule of rules) {
    t.regex(rule.labels?.severity ?? "", /^(critical|warning|info)$/, rule.alert);
    t.true((rule.annotations?.summary ?? "").length > 20, `${rule.alert}: summary`);
    t.true((rule.annotations?.description ?? "").length > 80, `${rule.alert}: a description that says what to do`);
    t.true(firing.has(rule.alert), `${rule.alert}: no unit test expects it to fire`);
  }
});

test("alerts › every alert links its runbook: a section of docs/alerts.md named after it", (t) => {
  // Given the runbook page and GitHub's heading anchors (lower case, spaces to dashes, punctuation dropped)
  const page = readFileSync(join(ROOT, "docs", "alerts.md"), "utf8");
  const anchors = new Set([...page.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-")));
  for (const rule of rulesOf(parse(alertsText))) {
    // Then each alert's runbook_url is that page at the alert's own section
    t.is(rule.annotations?.runbook_url, `docs/alerts.md#${rule.alert.toLowerCase()}`, rule.alert);
    t.true(anchors.has(rule.alert.toLowerCase()), `docs/alerts.md has no section for ${rule.alert}`);
  }
});

test("alerts › promtool test rules passes on the shipped files as an operator runs it (no harness filling anything in)", (t) => {
  if (!promtool) {
    t.log("promtool not installed (Debian package prometheus, installed by scripts/test-deps.sh as root): skipped");
    t.pass();
    return;
  }
  // When promtool runs in envoy/prometheus on the files as they are in the repository
  const run = spawnSync(promtool, ["test", "rules", "alerts.test.yml"], { cwd: join(ROOT, "envoy", "prometheus"), encoding: "utf8" });
  // Then every unit test passes
  t.is(run.status, 0, run.stdout + run.stderr);
  t.regex(run.stdout, /SUCCESS/);
});

test("alerts › the README's alert table lists every alert", (t) => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  for (const rule of rulesOf(parse(alertsText))) t.true(readme.includes(`| \`${rule.alert}\` |`), `README lacks ${rule.alert}`);
});

test("alerts › promtool check rules and promtool test rules pass", (t) => {
  if (!promtool) {
    t.log("promtool not installed (Debian package prometheus, installed by scripts/test-deps.sh as root): skipped");
    t.pass();
    return;
  }
  const check = promtoolCheckRules(promtool, alertsText);
  t.is(check.status, 0, check.output);
  const unit = promtoolTestRules(promtool, alertsText);
  t.is(unit.status, 0, unit.output);
  t.regex(unit.output, /SUCCESS/);
});

test("alerts › self-check: a broken threshold fails the unit tests and a broken expression fails check rules", (t) => {
  if (!promtool) {
    t.log("promtool not installed (Debian package prometheus, installed by scripts/test-deps.sh as root): skipped");
    t.pass();
    return;
  }
  // Given the rules with the stale-policy threshold raised from 5 to 50 minutes, the unit tests fail on that alert
  const weakened = alertsText.replace("meshext_control_plane_last_sync_success_timestamp_seconds > 300", "meshext_control_plane_last_sync_success_timestamp_seconds > 3000");
  t.not(weakened, alertsText, "the self-check's edit applies");
  const unit = promtoolTestRules(promtool, weakened);
  t.not(unit.status, 0);
  t.regex(unit.output, /alertname: MeshextPolicySetStale/);
  // And an expression that does not parse is refused by check rules, naming the problem
  const broken = alertsText.replace(`expr: up{job="meshext-sidecar"} == 0`, `expr: up{job="meshext-sidecar"} ==`);
  t.not(broken, alertsText, "the self-check's edit applies");
  const check = promtoolCheckRules(promtool, broken);
  t.not(check.status, 0);
  t.regex(check.output, /parse error|unexpected/);
});
