// The line under MUTATION.md's Stryker table that sums its rows: the whole run's mutants, score and length.
/** One line under the table: the rows summed (mutants, score over what is scored, seconds: the whole run's length when every row is from one run). */
export function totalLine(rows) {
  const cells = rows.map((r) => r.split("|").map((c) => c.trim()));
  const sum = (i) => cells.reduce((n, c) => n + Number(c[i]), 0);
  const [mutants, killed, equivalent, seconds] = [sum(2), sum(3), sum(6), sum(8)];
  const score = mutants - equivalent > 0 ? ((100 * killed) / (mutants - equivalent)).toFixed(1) : "–";
  return `All ${cells.length} areas: ${mutants} mutants, ${killed} killed, ${equivalent} equivalent, ${score} %; ${seconds} s (${(seconds / 60).toFixed(1)} min) summed over the rows.`;
}
