// YAML inputs past the limits, for the hardening tests (yaml-limits.test.ts in process, yaml-limits-cli.test.ts as
// processes): every way YAML nests, just under 1 MiB, and an alias bomb.
export const MIB = 1 << 20;

/** Bodies just under 1 MiB, one per way YAML nests. */
export const DEEP: Record<string, string> = {
  "compact sequences (- - - …)": "- ".repeat(MIB / 2 - 8) + "x\n",
  "sequence of mappings (- a: - a: …)": "- a: ".repeat(MIB / 5 - 8) + "x\n",
  "explicit keys (? ? …)": "? ".repeat(MIB / 2 - 8) + "x\n",
  "indentation, one level per line": Array.from({ length: 1400 }, (_, i) => " ".repeat(i) + "- ").join("\n"),
  "mapping then sequence at one indent": Array.from({ length: 700 }, (_, i) => `${" ".repeat(i * 2)}a:\n${" ".repeat(i * 2)}- b:`).join("\n"),
  "flow brackets": "a: " + "[".repeat(MIB / 2 - 8) + "]".repeat(MIB / 2 - 8),
  "deep sequences behind a quote that is not one (a')": "x: a'\n" + "- ".repeat(MIB / 2 - 16) + "x\n",
  "deep sequences after a `'` line in a block scalar": "note: |\n  '\nspec:\n  " + "- ".repeat(MIB / 2 - 32) + "x\n",
  "deep sequences after a `\"` line in a folded block scalar": 'note: >-\n  "\nspec:\n  ' + "- ".repeat(MIB / 2 - 32) + "x\n",
  "invalid YAML that error recovery nests (? then a multi-line quoted key, repeated)": '  ? \n  "a:   ? \n'.repeat(Math.floor(MIB / 20)),
};

/** A Kubernetes Pod whose last field expands 9^7 times. */
export const ALIAS_BOMB = [
  "apiVersion: v1",
  "kind: Pod",
  "metadata: {name: p}",
  "x1: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
  "x2: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
  "x3: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
  "x4: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
  "x5: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]",
  "x6: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]",
  "x7: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]",
  "spec: {containers: [{name: app, image: app}], x: *g}",
].join("\n");

/** What `meshext inject` must refuse as [input_invalid]: the alias bomb and four of the deep inputs. */
export const injectInputs = (): Record<string, string> => ({
  "alias bomb": ALIAS_BOMB,
  "deep compact sequences": DEEP["compact sequences (- - - …)"]!,
  "deep indentation": DEEP["indentation, one level per line"]!,
  "deep sequences after a `'` line in a block scalar": DEEP["deep sequences after a `'` line in a block scalar"]!,
  "error recovery nesting": DEEP["invalid YAML that error recovery nests (? then a multi-line quoted key, repeated)"]!,
});
