// Why a fetch() failed, in words an operator can act on: Node's fetch says only "fetch failed" and keeps the
// reason (ECONNREFUSED, ENOTFOUND, a timeout…) in `cause`.

const CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused (nothing listens there)",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name lookup failed (DNS)",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  UND_ERR_SOCKET: "the connection closed before an answer",
  UND_ERR_HEADERS_TIMEOUT: "no answer in time",
};

/** "connection refused (nothing listens there) [ECONNREFUSED]", "no answer within 2000ms", or the error's own message. */
export function describeFetchError(err: unknown, timeoutMs?: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return timeoutMs === undefined ? "no answer in time" : `no answer within ${timeoutMs}ms`;
  const code = e?.cause?.code;
  if (code) return `${CAUSES[code] ?? e.cause!.message ?? code} [${code}]`;
  if (e?.cause?.message) return e.cause.message;
  return e?.message ?? String(err);
}
