// Filter log lines, all prefixed "meshext_drain: " so they are grep-able in Envoy's log.
import { log } from "./abi/host";
export { decimal } from "./abi/decimal";

const PREFIX = "meshext_drain: ";

export function logAt(level: u32, message: string): void {
  log(level, PREFIX + message);
}
