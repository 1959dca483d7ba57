// Structured JSON-line logging (pino) on stdout; one root logger per process, children per component.
import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger };

export function createLogger(level: string, destination: NodeJS.WritableStream = process.stdout): Logger {
  return pino({ level, base: { svc: "meshext" }, timestamp: pino.stdTimeFunctions.isoTime }, destination as DestinationStream);
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
