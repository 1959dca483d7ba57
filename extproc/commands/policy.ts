// `meshext policy <lint|test|what-if|apply>`: checks a policy change before it ships (each subcommand in its own file).
import { ConfigError } from "../config/flags.js";

type Main = (argv: string[], env: NodeJS.ProcessEnv) => Promise<number>;

const SUBCOMMANDS: Record<string, { summary: string; load: () => Promise<Main> }> = {
  lint: { summary: "Validate policy files and directories exactly as the sidecar and the control plane do.", load: async () => (await import("./policy-lint.js")).main },
  test: { summary: "Run YAML test cases (a dataplane, policies, requests, expected outcomes) through the policy engine.", load: async () => (await import("./policy-test.js")).main },
  "what-if": { summary: "Replay a decision log against candidate policies and report every decision that would change.", load: async () => (await import("./policy-what-if.js")).main },
  apply: { summary: "PUT policy files to the control plane; --dry-run validates and lists the dataplanes each would select.", load: async () => (await import("./policy-apply.js")).main },
};

export function policyUsage(): string {
  const lines = ["Usage: meshext policy <subcommand> [flags]", "", "Subcommands:"];
  for (const [name, s] of Object.entries(SUBCOMMANDS)) lines.push(`  ${name.padEnd(9)} ${s.summary}`);
  lines.push("", "Run `meshext policy <subcommand> --help` for its flags.");
  return lines.join("\n") + "\n";
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(policyUsage());
    return 0;
  }
  const sub = name === undefined ? undefined : SUBCOMMANDS[name];
  if (!sub) throw new ConfigError(`${name === undefined ? "missing subcommand" : `unknown subcommand "${name}"`}\n\n${policyUsage()}`);
  return (await sub.load())(rest, env);
}
