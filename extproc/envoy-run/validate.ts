// `envoy --mode validate` on a bootstrap before Envoy is started on it: Envoy's own verdict, in its own words.
import { spawnSync } from "node:child_process";

export interface Validation {
  ok: boolean;
  /** Envoy's reason (its critical log line, without the log prefix) when not ok. */
  message: string;
}

/** The message of Envoy's "[critical]" line, e.g. "error initializing configuration '…': Invalid path: …". */
export function envoyComplaint(output: string): string {
  const lines = output.split("\n").filter((l) => l.trim() !== "");
  const critical = lines.filter((l) => /\]\[(critical|error)\]/.test(l)).map((l) => l.replace(/^(\[[^\]]*\])+\s*/, ""));
  return (critical.length > 0 ? critical : lines.slice(-3)).join("\n").trim() || "Envoy rejected the configuration";
}

/** Runs `envoyBinary --mode validate ARGS` (ARGS carry the bootstrap: -c FILE or --config-yaml). */
export function validateBootstrap(envoyBinary: string, args: readonly string[]): Validation {
  const run = spawnSync(envoyBinary, ["--mode", "validate", "--disable-hot-restart", ...args.filter((a) => a !== "--disable-hot-restart")], { encoding: "utf8", timeout: 60_000 });
  if (run.error) return { ok: false, message: `could not run ${envoyBinary}: ${run.error.message}` };
  const output = (run.stdout ?? "") + (run.stderr ?? "");
  return run.status === 0 ? { ok: true, message: "" } : { ok: false, message: envoyComplaint(output) };
}
