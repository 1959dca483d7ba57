// Log message texts (E_* constants), so the wording lives in one place and tests can match it.
// Kept short on purpose: AssemblyScript stores strings as UTF-16, and every literal costs module bytes (24 KiB budget).

export const E_CONFIG_INVALID: string = "invalid plugin configuration: ";
export const E_CONFIG_EXPECTED: string = " (fields: wasm/README.md)";
export const E_CONFIG_NOT_JSON: string = "expected a JSON object";
export const E_CONFIG_UNAVAILABLE: string = "plugin configuration unavailable";
export const E_METRIC_DEFINE: string = "cannot define metric ";
export const E_POLL_DISPATCH: string = "poll dispatch";
export const E_POLL_RESET: string = "poll failed: no response";
export const E_POLL_STATUS: string = "poll answered HTTP ";
export const E_POLL_MALFORMED: string = "poll body malformed";
export const E_SHARED_WRITE: string = "shared data write";
export const E_LOCAL_REPLY: string = "local reply";
export const E_HEADER_WRITE: string = "header write";
/** Follows a host call's name above: "<name> failed, status <proxy_status_t>". */
export const E_FAILED_STATUS: string = " failed, status ";
