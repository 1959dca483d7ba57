// Filter log lines, all prefixed "meshext_drain: " so they are grep-able in Envoy's log. A line is
// built in one static buffer (no String concatenation): startLine(...), append, emit(level, line).
import { log } from "./abi/host";
import { Writer } from "./abi/writer";
import { E_FAILED_STATUS } from "./errors";

const LINE_BYTES = 2048;
const LINE = new Writer(memory.data(LINE_BYTES), LINE_BYTES);

/** The line buffer, reset to the prefix and `message`; append to it, then emit(). */
export function startLine(message: string): Writer {
  return LINE.reset().text("meshext_drain: ").text(message);
}

export function emit(level: u32, line: Writer): void {
  log(level, line);
}

export function logAt(level: u32, message: string): void {
  emit(level, startLine(message));
}

/** A line "<call> failed, status <status>" (errors.ts names the call); append to it, then emit(). */
export function failedLine(call: string, status: u32): Writer {
  return startLine(call).text(E_FAILED_STATUS).decimal(status);
}
