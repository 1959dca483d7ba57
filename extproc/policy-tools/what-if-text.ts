// A what-if report as text: each example change (before/after with the deciding policy), the count per change
// class, what could not be replayed, and a one-line summary (also the last line of every format's stderr).
import type { Change, Side, WhatIfReport } from "./replay.js";

function side(s: Side): string {
  const by = s.policy ? `${s.kind} ${s.policy}${s.rule ? " " + s.rule : ""}` : s.kind === "none" ? "no policy" : s.kind;
  return `${s.outcome}${s.status ? " " + s.status : ""} (${by})${s.reason ? ": " + s.reason : ""}`;
}

function changeLines(c: Change): string[] {
  const who = c.client ? ` from ${c.client}` : "";
  return [
    `  line ${c.line}${c.time ? " " + c.time : ""}${c.requestId ? " " + c.requestId : ""}: ${c.direction} ${c.method} ${c.authority}${c.path}${who} on ${c.dataplane}  [${c.change}]`,
    `    before: ${side(c.before)}`,
    `    after:  ${side(c.after)}`,
  ];
}

export function summaryLine(r: WhatIfReport): string {
  const classes = Object.entries(r.classes).map(([k, n]) => `${k} ${n}`).join(", ");
  const skipped = Object.values(r.unreplayable).reduce((a, b) => a + b, 0);
  const notes = [
    ...(r.malformed ? [`${r.malformed} malformed line(s) skipped`] : []),
    ...(skipped ? [`${skipped} record(s) not replayable`] : []),
    ...(r.approximate ? [`${r.approximate} replayed without every header the routes match on`] : []),
  ];
  return `${r.changed} of ${r.replayed} replayed decision(s) would change${classes ? ` (${classes})` : ""}${notes.length ? "; " + notes.join(", ") : ""}`;
}

export function whatIfText(r: WhatIfReport): string {
  const lines: string[] = [];
  if (r.examples.length > 0) {
    lines.push(`changed decisions (${r.examples.length < r.changed ? `first ${r.examples.length} of ${r.changed}` : r.changed}):`);
    for (const c of r.examples) lines.push(...changeLines(c));
  }
  const classes = Object.entries(r.classes);
  if (classes.length > 0) {
    lines.push("changes by class:");
    const width = Math.max(...classes.map(([k]) => k.length));
    for (const [k, n] of classes) lines.push(`  ${k.padEnd(width)}  ${n}`);
  }
  const skipped = Object.entries(r.unreplayable);
  if (skipped.length > 0) {
    lines.push("not replayable:");
    for (const [why, n] of skipped) lines.push(`  ${n}  ${why}`);
  }
  if (r.malformedExamples.length > 0) {
    lines.push(`malformed lines (skipped): ${r.malformed}`);
    for (const m of r.malformedExamples) lines.push(`  line ${m.line}: ${m.why}`);
  }
  lines.push(summaryLine(r));
  return lines.join("\n") + "\n";
}
