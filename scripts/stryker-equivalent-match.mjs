// Whether a Stryker mutant is one that scripts/stryker-equivalents.json lists: the entry's file, line and mutator,
// and, when it gives them, its column, its replacement, the column where the mutated expression ends and the text of
// its source line (which finds the line again after code above it moved).
/**
 * Stryker puts several mutants of one mutator at one line and column when one expression starts another (`a || b`
 * → false, and `a` → false): `endColumn` tells them apart. An entry with `source` (its line's text, trimmed) matches
 * the mutant's line when that line has that text and either is the entry's line or is the only line of the file
 * with that text; without `source`, only the entry's line matches.
 * @param {{ file: string, line: number, column?: number, endColumn?: number, mutator: string, replacement?: string, source?: string }[]} equivalents
 * @param {string} file
 * @param {{ mutatorName: string, replacement?: string, location: { start: { line: number, column: number }, end: { line: number, column: number } } }} mutant
 * @param {string[]} [sourceLines] the file's lines as the report gives them (without them, lines match by number only)
 */
export function isEquivalent(equivalents, file, mutant, sourceLines) {
  const { start, end } = mutant.location;
  const text = sourceLines?.[start.line - 1]?.trim();
  return equivalents.some((e) =>
    e.file === file && e.mutator === mutant.mutatorName &&
    (e.column === undefined || e.column === start.column) &&
    (e.endColumn === undefined || e.endColumn === end.column) &&
    (e.replacement === undefined || e.replacement === mutant.replacement) &&
    lineMatches(e, start.line, text, sourceLines));
}

function lineMatches(entry, line, text, sourceLines) {
  if (entry.source === undefined || sourceLines === undefined) return entry.line === line;
  if (text !== entry.source) return false;
  return entry.line === line || occurrences(sourceLines, entry.source) === 1;
}

const counted = new WeakMap(); // sourceLines → Map(trimmed text → how many lines have it)
function occurrences(sourceLines, text) {
  if (!counted.has(sourceLines)) {
    const counts = new Map();
    for (const l of sourceLines) counts.set(l.trim(), (counts.get(l.trim()) ?? 0) + 1);
    counted.set(sourceLines, counts);
  }
  return counted.get(sourceLines).get(text) ?? 0;
}
