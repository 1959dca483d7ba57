// Custom abort (asconfig "use": abort=wasm/abi/abort/abortToLog): reports through proxy_log, which
// Envoy links and allows even during _initialize, instead of importing env.abort (which Envoy lacks).
import { log } from "./host";
import { LogLevel } from "./types";
import { Writer } from "./writer";

const LINE_BYTES = 256;

export function abortToLog(message: string | null, fileName: string | null, lineNumber: u32, columnNumber: u32): void {
  // Made here, not as a global: a global's initialiser could itself abort while being compiled.
  const line = new Writer(memory.data(LINE_BYTES), LINE_BYTES);
  line.text("meshext_drain: abort: ");
  if (message !== null) line.text(message);
  line.text(" at ");
  if (fileName !== null) line.text(fileName);
  line.byte(0x3a).decimal(lineNumber).byte(0x3a).decimal(columnNumber); // ":line:column"
  log(LogLevel.Critical, line);
  unreachable();
}
