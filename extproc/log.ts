// Structured JSON-line logging (pino) on stdout; one root logger per process, children per component.
// A log stream that fails (stdout's reader gone: `meshext sidecar | head -n1` → EPIPE) is counted and
// ignored: logging never takes the process down.
import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger };

/** Log writes that failed since start (meshext_log_write_errors_total); what was written then is lost. */
export const logWriteErrors = { count: 0 };

/** Counts and swallows the stream's errors (once per stream: the listener is shared). */
export function ignoreStreamErrors(stream: NodeJS.WritableStream): void {
  if (stream.listeners("error").includes(countError)) return;
  stream.on("error", countError);
}

function countError(): void {
  logWriteErrors.count++;
}

export function createLogger(level: string, destination: NodeJS.WritableStream = process.stdout): Logger {
  ignoreStreamErrors(destination);
  return pino({ level, base: { svc: "meshext" }, timestamp: pino.stdTimeFunctions.isoTime }, destination as DestinationStream);
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
