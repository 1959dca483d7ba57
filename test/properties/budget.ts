// Shared settings of the property tests: a time budget per property (all of them together stay within
// ~60 s of `npm test`), and a reproducible seed: FC_SEED=<n> replays a failure, whose message prints its seed.
import fc from "fast-check";

/** Runs of one property, bounded in count and time. */
export function budget(numRuns: number, timeLimitMs = 6000): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  return { numRuns, interruptAfterTimeLimit: timeLimitMs, markInterruptAsFailure: false, ...(seed === undefined ? {} : { seed }) };
}

/** Text that looks like YAML more often than random strings do: indicators, brackets, quotes, anchors, indentation. */
export const yamlish = fc
  .array(fc.constantFrom("- ", "? ", ": ", "a", "type", "name", "spec", "[", "]", "{", "}", ",", "'", '"', "&x ", "*x", "!t ", "#", "\n", "\n  ", "\n    ", " ", "|\n", "%", "\\", "1", "---\n", "\t"), { maxLength: 200 })
  .map((parts) => parts.join(""));
