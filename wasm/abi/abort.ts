// Custom abort (asconfig "use": abort=wasm/abi/abort/abortToLog): reports through proxy_log, which
// Envoy links and allows even during _initialize, instead of importing env.abort (which Envoy lacks).
import { proxy_log } from "./imports";
import { LogLevel } from "./types";
import { decimal } from "./decimal";

export function abortToLog(message: string | null, fileName: string | null, lineNumber: u32, columnNumber: u32): void {
  let text = "meshext_drain: abort: ";
  text += message !== null ? message : "(no message)";
  text += " at ";
  text += fileName !== null ? fileName : "?";
  text += ":" + decimal(lineNumber) + ":" + decimal(columnNumber);
  const bytes = String.UTF8.encode(text);
  proxy_log(LogLevel.Critical, changetype<usize>(bytes), <usize>bytes.byteLength);
  unreachable();
}
