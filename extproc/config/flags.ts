// Declarative command-line flags: one table per command gives each flag its type, default,
// environment variable and help; resolve() merges defaults < config file < env < argv.
import { readFileSync } from "node:fs";
import { type KumaVersion, parseKumaVersion } from "../kuma-rest/kuma-version.js";
import { parseYamlBounded, yamlLimitViolation } from "../policy/documents/yaml-limits.js";
import { parseDurationMs } from "./duration.js";

export type FlagType = "string" | "int" | "ratio" | "duration" | "bool" | "hostport" | "url" | "enum" | "path";

export interface FlagSpec {
  /** Key in the resolved config object (camelCase). */
  key: string;
  /** Flag name without dashes (kebab-case). */
  flag: string;
  type: FlagType;
  /** Value used when no source sets it. Durations are in milliseconds. */
  default: string | number | boolean;
  help: string;
  /** Allowed values, with type "enum". */
  values?: readonly string[];
  /** Lower bound for int and duration. */
  min?: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export type Resolved = Record<string, string | number | boolean>;

/** The value type a spec resolves to: numbers for int, ratio and duration (ms), booleans, enum literals, else strings. */
type ValueOf<S extends FlagSpec> = S["type"] extends "int" | "ratio" | "duration" ? number : S["type"] extends "bool" ? boolean : S extends { values: readonly (infer V)[] } ? V : string;

/** The typed object a flag table resolves to: one field per spec, named by its key. */
export type FlagValues<Specs extends readonly FlagSpec[]> = { [S in Specs[number] as S["key"]]: ValueOf<S> };

/** The environment prefix of the sidecar's flags (and of drain / wait-ready, whose shared flags mean the same). */
export const DEFAULT_ENV_PREFIX = "MESHEXT_";

/** MESHEXT_GRPC_LISTEN for grpc-listen; each command whose flags would mean something else has its own prefix. */
export function envName(flag: string, prefix = DEFAULT_ENV_PREFIX): string {
  return prefix + flag.toUpperCase().replace(/-/g, "_");
}

function coerce(spec: FlagSpec, raw: unknown, source: string): string | number | boolean {
  const where = `${source} --${spec.flag}`;
  const text = typeof raw === "string" ? raw.trim() : raw;
  switch (spec.type) {
    case "bool": {
      if (typeof text === "boolean") return text;
      if (text === "true" || text === "1" || text === "") return true;
      if (text === "false" || text === "0") return false;
      throw new ConfigError(`${where}: expected true or false, got ${JSON.stringify(raw)}`);
    }
    case "int": {
      const n = typeof text === "number" ? text : Number(text);
      if (!Number.isInteger(n)) throw new ConfigError(`${where}: expected an integer, got ${JSON.stringify(raw)}`);
      if (spec.min !== undefined && n < spec.min) throw new ConfigError(`${where}: must be at least ${spec.min}, got ${n}`);
      return n;
    }
    case "ratio": {
      const n = typeof text === "number" ? text : text === "" ? NaN : Number(text);
      if (!Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`${where}: expected a number from 0 to 1, got ${JSON.stringify(raw)}`);
      return n;
    }
    case "duration": {
      const ms = parseDurationMs(text);
      if (ms === undefined) {
        throw new ConfigError(`${where}: expected a duration such as 500ms, 5s or 2m (a bare number is milliseconds), got ${JSON.stringify(raw)}`);
      }
      if (spec.min !== undefined && ms < spec.min) throw new ConfigError(`${where}: must be at least ${spec.min}ms, got ${ms}ms`);
      return ms;
    }
    case "hostport": {
      if (typeof text !== "string") throw new ConfigError(`${where}: expected HOST:PORT, got ${JSON.stringify(raw)}`);
      if (text === "") return "";
      const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
      if (!m || Number(m[2]) > 65535) {
        throw new ConfigError(`${where}: expected HOST:PORT with a port from 0 to 65535, got ${JSON.stringify(raw)}`);
      }
      return text;
    }
    case "url": {
      if (typeof text !== "string") throw new ConfigError(`${where}: expected a URL, got ${JSON.stringify(raw)}`);
      if (text === "") return "";
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        throw new ConfigError(`${where}: expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new ConfigError(`${where}: expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
      }
      return text.replace(/\/+$/, "");
    }
    case "enum": {
      if (typeof text !== "string" || !spec.values?.includes(text)) {
        throw new ConfigError(`${where}: must be one of ${spec.values?.join(", ")}, got ${JSON.stringify(raw)}`);
      }
      return text;
    }
    case "string":
    case "path": {
      if (typeof text === "number" || typeof text === "boolean") return String(text);
      if (typeof text !== "string") throw new ConfigError(`${where}: expected a string, got ${JSON.stringify(raw)}`);
      return text;
    }
  }
}

function readConfigFile(path: string, specs: readonly FlagSpec[]): Map<FlagSpec, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`--config: cannot read ${path}: ${(err as Error).message}`);
  }
  const tooComplex = yamlLimitViolation(text);
  if (tooComplex) throw new ConfigError(`--config: ${path} ${tooComplex}`);
  let doc: unknown;
  try {
    doc = parseYamlBounded(text, { maxAliasCount: 0 });
  } catch (err) {
    throw new ConfigError(`--config: ${path} is not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return new Map();
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError(`--config: ${path} must be a mapping of flag names to values`);
  }
  const out = new Map<FlagSpec, unknown>();
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    const spec = specs.find((s) => s.flag === name || s.key === name);
    if (!spec || spec.key === "config") throw new ConfigError(`--config: ${path}: unknown setting "${name}"`);
    out.set(spec, value);
  }
  return out;
}

export interface ParsedArgs {
  values: Resolved;
  /** Where each value that is not a default came from: "flag --x", "environment MESHEXT_X", "config file PATH". */
  sources: Record<string, string>;
  /** Arguments after `--` (e.g. the Envoy command line for `meshext run`). */
  rest: string[];
  help: boolean;
}

/**
 * Resolves every flag of a command: defaults, then the --config file, then MESHEXT_* env,
 * then argv. Throws ConfigError naming the flag on the first bad value.
 */
export function resolveFlags(specs: readonly FlagSpec[], argv: readonly string[], env: NodeJS.ProcessEnv, envPrefix = DEFAULT_ENV_PREFIX): ParsedArgs {
  const fromArgv = new Map<FlagSpec, unknown>();
  const rest: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      rest.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-h" || arg === "--help") {
      help = true;
      continue;
    }
    if (!arg.startsWith("--")) throw new ConfigError(`unexpected argument ${JSON.stringify(arg)} (flags start with --)`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const negated = name.startsWith("no-") ? specs.find((s) => s.type === "bool" && s.flag === name.slice(3)) : undefined;
    const spec = specs.find((s) => s.flag === name) ?? negated;
    if (!spec) throw new ConfigError(`unknown flag --${name} (see --help)`);
    if (negated) {
      fromArgv.set(spec, false);
    } else if (eq !== -1) {
      fromArgv.set(spec, arg.slice(eq + 1));
    } else if (spec.type === "bool") {
      fromArgv.set(spec, true);
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) throw new ConfigError(`--${spec.flag}: needs a value`);
      fromArgv.set(spec, next);
      i++;
    }
  }
  const values: Resolved = {};
  const sources: Record<string, string> = {};
  for (const spec of specs) values[spec.key] = spec.default;

  const configSpec = specs.find((s) => s.key === "config");
  const configPath =
    (configSpec && (fromArgv.get(configSpec) as string | undefined)) ?? (configSpec ? env[envName(configSpec.flag, envPrefix)] : undefined);
  if (configSpec && configPath) {
    values.config = configPath;
    for (const [spec, raw] of readConfigFile(configPath, specs)) {
      values[spec.key] = coerce(spec, raw, `config file ${configPath}:`);
      sources[spec.key] = `config file ${configPath}`;
    }
  }
  for (const spec of specs) {
    const name = envName(spec.flag, envPrefix);
    const raw = env[name];
    if (raw !== undefined && spec.key !== "config") {
      values[spec.key] = coerce(spec, raw, `environment ${name}:`);
      sources[spec.key] = `environment ${name}`;
    }
  }
  for (const [spec, raw] of fromArgv) {
    if (spec.key !== "config") {
      values[spec.key] = coerce(spec, raw, "flag");
      sources[spec.key] = `flag --${spec.flag}`;
    }
  }
  return { values, sources, rest, help };
}

function showDefault(spec: FlagSpec): string {
  if (spec.type === "duration") return formatDurationMs(spec.default as number);
  if (spec.default === "") return '""';
  return String(spec.default);
}

/** resolveFlags, typed by the table: the values as that table's FlagValues. */
export function resolveConfig<Specs extends readonly FlagSpec[]>(specs: Specs, argv: readonly string[], env: NodeJS.ProcessEnv, envPrefix = DEFAULT_ENV_PREFIX): { config: FlagValues<Specs>; parsed: ParsedArgs } {
  const parsed = resolveFlags(specs, argv, env, envPrefix);
  return { config: parsed.values as FlagValues<Specs>, parsed };
}

export function formatDurationMs(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 && ms > 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** Help text: one line per flag with its env variable and default. */
export function formatHelp(usage: string, summary: string, specs: readonly FlagSpec[], envPrefix = DEFAULT_ENV_PREFIX): string {
  const lines = [`Usage: ${usage}`, "", summary, "", `Flags (each also settable as ${envPrefix}<FLAG> or in the --config file):`];
  for (const spec of specs) {
    const kind = spec.type === "enum" ? spec.values!.join("|") : spec.type === "bool" ? "" : spec.type.toUpperCase();
    lines.push(`  --${spec.flag}${kind ? " " + kind : ""}`);
    lines.push(`      ${spec.help} [default: ${showDefault(spec)}] [env: ${envName(spec.flag, envPrefix)}]`);
  }
  lines.push("  -h, --help", "      Show this help.");
  return lines.join("\n") + "\n";
}

/** "--patches (environment MESHEXT_INJECT_PATCHES)": a flag with where its value came from, for errors about several. */
export function flagWithSource(parsed: Pick<ParsedArgs, "sources">, spec: Pick<FlagSpec, "key" | "flag">): string {
  const source = parsed.sources[spec.key];
  return source && source !== `flag --${spec.flag}` ? `--${spec.flag} (from ${source})` : `--${spec.flag}`;
}

/** A `--kuma-version` value as a supported minor; "" (auto-detect) gives undefined; anything else is a ConfigError. */
export function pinnedKumaVersion(raw: string): KumaVersion | undefined {
  if (raw.trim() === "") return undefined;
  const parsed = parseKumaVersion(raw);
  if ("error" in parsed) throw new ConfigError(`--kuma-version: ${parsed.error}`);
  return parsed.version;
}
