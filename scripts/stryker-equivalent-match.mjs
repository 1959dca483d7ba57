// Whether a Stryker mutant is one that scripts/stryker-equivalents.json lists: the entry's file, line and mutator,
// and, when it gives them, its column, its replacement and the column where the mutated expression ends.
/**
 * Stryker puts several mutants of one mutator at one line and column when one expression starts another (`a || b`
 * → false, and `a` → false): `endColumn` tells them apart.
 * @param {{ file: string, line: number, column?: number, endColumn?: number, mutator: string, replacement?: string }[]} equivalents
 * @param {string} file
 * @param {{ mutatorName: string, replacement?: string, location: { start: { line: number, column: number }, end: { line: number, column: number } } }} mutant
 */
export function isEquivalent(equivalents, file, mutant) {
  const { start, end } = mutant.location;
  return equivalents.some((e) =>
    e.file === file && e.line === start.line && e.mutator === mutant.mutatorName &&
    (e.column === undefined || e.column === start.column) &&
    (e.endColumn === undefined || e.endColumn === end.column) &&
    (e.replacement === undefined || e.replacement === mutant.replacement));
}
