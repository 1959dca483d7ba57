// Kuma-style REST error bodies: RFC 7807 problem details with `invalid_parameters`, plus the older
// `details` / `causes` fields Kuma still emits, so both old and new kumactl/GUI clients read them.

export interface Violation {
  field: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  status: number;
  title: string;
  detail: string;
  invalid_parameters?: Array<{ field: string; reason: string }>;
  /** Deprecated in Kuma, kept for older clients. */
  details: string;
  /** Deprecated in Kuma, kept for older clients. */
  causes?: Array<{ field: string; message: string }>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly violations: readonly Violation[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${title}: ${detail}`);
    this.name = "ApiError";
  }

  body(): ProblemBody {
    const body: ProblemBody = { type: "/std-errors", status: this.status, title: this.title, detail: this.detail, details: this.detail };
    if (this.violations.length) {
      body.invalid_parameters = this.violations.map((v) => ({ field: v.field, reason: v.message }));
      body.causes = this.violations.map((v) => ({ field: v.field, message: v.message }));
    }
    return body;
  }
}

export const badRequest = (detail: string, violations: readonly Violation[] = []) =>
  new ApiError(400, violations.length ? "Could not process a resource" : "Bad Request", detail, violations);
export const invalidResource = (violations: readonly Violation[]) =>
  new ApiError(400, "Could not process a resource", "Resource is not valid", violations);
export const notFound = (detail: string) => new ApiError(404, "Not Found", detail);
export const unauthorized = () =>
  new ApiError(401, "Unauthorized", "this operation needs `Authorization: Bearer <token>` with the control plane's token", [], {
    "www-authenticate": 'Bearer realm="meshext-control-plane"',
  });
export const methodNotAllowed = (method: string, path: string, allow: string[]) =>
  new ApiError(405, "Method Not Allowed", `method ${method} is not allowed on ${path}`, [], { allow: allow.join(", ") });
export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(413, "Payload Too Large", `request body is larger than ${limitBytes} bytes`);
