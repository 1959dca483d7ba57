// Command lines of the policy tools: positional arguments (PATH…), kubectl-style short flags (-m, -o) and
// flags that take several values (--policies A B …) in front of the shared declarative flag parser
// (config/flags.ts resolveConfig), which still checks and coerces every value and raises ConfigError (exit 2).
import { ConfigError, formatHelp, type FlagSpec, type FlagValues, resolveConfig, type ParsedArgs } from "../config/flags.js";

export interface ToolArgs<Specs extends readonly FlagSpec[]> {
  config: FlagValues<Specs>;
  parsed: ParsedArgs;
  positionals: string[];
  /** Values of the multi-value flags, by key (every value given, in order). */
  lists: Record<string, string[]>;
}

export interface ToolArgsOptions {
  /** Single-letter aliases: `-m` → `mesh`. */
  short?: Record<string, string>;
  /** Flags (by flag name) that take every following argument up to the next flag. */
  multi?: readonly string[];
}

/** Environment prefix of the policy tools' flags (none of them mean the sidecar's). */
export const TOOLS_ENV_PREFIX = "MESHEXT_TOOLS_";

export function parseToolArgs<Specs extends readonly FlagSpec[]>(specs: Specs, argv: readonly string[], env: NodeJS.ProcessEnv, opts: ToolArgsOptions = {}): ToolArgs<Specs> {
  const flags: string[] = [];
  const positionals: string[] = [];
  const lists: Record<string, string[]> = {};
  const multi = new Set(opts.multi ?? []);
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i]!;
    const short = /^-([A-Za-z])$/.exec(arg);
    if (short && short[1] !== "h") {
      const long = opts.short?.[short[1]!];
      if (!long) throw new ConfigError(`unknown flag ${arg} (see --help)`);
      arg = `--${long}`;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const name = arg.startsWith("--") ? arg.slice(2).split("=")[0]! : "";
    const spec = specs.find((s) => s.flag === name);
    if (spec && multi.has(name)) {
      const list = (lists[spec.key] ??= []);
      const eq = arg.indexOf("=");
      if (eq !== -1) list.push(arg.slice(eq + 1));
      while (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("-")) list.push(argv[++i]!);
      if (list.length === 0) throw new ConfigError(`--${name}: needs at least one value`);
      continue;
    }
    flags.push(arg);
    // A flag's value travels with it, so that a value is never mistaken for a positional argument.
    if (spec && spec.type !== "bool" && !arg.includes("=") && argv[i + 1] !== undefined) flags.push(argv[++i]!);
  }
  const { config, parsed } = resolveConfig(specs, flags, env, TOOLS_ENV_PREFIX);
  // A multi-value flag set by its variable or the config file only: one value (the command line gives several).
  for (const name of multi) {
    const spec = specs.find((s) => s.flag === name);
    const value = spec ? (config as Record<string, unknown>)[spec.key] : undefined;
    if (spec && !lists[spec.key] && typeof value === "string" && value !== "") lists[spec.key] = [value];
  }
  return { config, parsed, positionals, lists };
}

/** The command's arguments, or undefined once `--help` has printed its usage (the command then exits 0). */
export function commandArgs<Specs extends readonly FlagSpec[]>(specs: Specs, argv: readonly string[], env: NodeJS.ProcessEnv, help: { usage: string; summary: string }, opts: ToolArgsOptions = {}): ToolArgs<Specs> | undefined {
  const args = parseToolArgs(specs, argv, env, opts);
  if (!args.parsed.help) return args;
  process.stdout.write(formatHelp(help.usage, help.summary, specs, TOOLS_ENV_PREFIX));
  return undefined;
}

/** `--output` of every tool command; `table` is the human form (text for lint, test and what-if). */
export const OUTPUT_FLAG = { key: "output", flag: "output", type: "enum", values: ["table", "json", "yaml"], default: "table", help: "Output format (-o): table (readable text), json or yaml." } as const;

/** `--kuma-version` as the sidecar reads it: empty means the engine default (2.14). */
export const KUMA_VERSION_FLAG = { key: "kumaVersion", flag: "kuma-version", type: "string", default: "", help: "Kuma release whose validation and policy semantics apply (2.5 to 2.14, e.g. 2.14 or 2.14.3, or 3.0: a preview of Kuma's unreleased main branch); empty: 2.14, as the sidecar without a control plane." } as const;
