// --kuma-version 3.0, a preview of Kuma's unreleased main branch: every command that parses --kuma-version
// accepts it and says "preview" in its help; the policy tools validate by 3.0's rules with it.
import test from "ava";
import { spawnSync } from "node:child_process";

const CLI = "dist/extproc/cli.js";
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 20_000 });

for (const command of [["sidecar"], ["run"], ["control-plane"], ["up"], ["policy", "lint"]]) {
  test(`kuma preview › meshext ${command.join(" ")} --help names 3.0 as a preview`, (t) => {
    // given the command; when its help is printed; then the --kuma-version line offers 3.0 as a preview
    const r = run([...command, "--help"]);
    t.is(r.status, 0, r.stderr);
    const entry = /\n\s+--kuma-version \S+\n([^\n]*)/.exec(r.stdout)?.[1] ?? "";
    t.regex(entry, /3\.0/, entry);
    t.regex(entry, /preview/, entry);
  });
}

test("kuma preview › policy lint --kuma-version 3.0 refuses a 2.14 from with its field path, and 2.14 accepts it", (t) => {
  // given the repo's 2.14 sample MTP with `from`; when linted as 3.0 and as 2.14; then only 3.0 reports spec.from
  const as30 = run(["policy", "lint", "--kuma-version", "3.0", "envoy/policies/traffic-permission.yaml"]);
  t.regex(as30.stdout + as30.stderr, /spec\.from: removed in Kuma 3\.0: use 'rules' with MeshIdentity \(spiffeID\) matches instead/);
  t.regex(as30.stdout + as30.stderr, /spec: policy must define rules/);
  const as214 = run(["policy", "lint", "--kuma-version", "2.14", "envoy/policies/traffic-permission.yaml"]);
  t.notRegex(as214.stdout + as214.stderr, /removed in Kuma 3\.0/);
  t.regex(as214.stdout + as214.stderr, /1 valid polic/);
});
