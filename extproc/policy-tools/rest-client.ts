// A small client of the Kuma REST API (embedded control plane or Kuma) and of the sidecar's admin API, for the
// kumactl-style commands: JSON in and out, a bearer token when given, every failure a readable RestError.
export class RestError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = "RestError";
  }
}

export interface RestTarget {
  /** Base URL without a trailing slash. */
  url: string;
  token?: string;
  /** Per request. @default 10000 */
  timeoutMs?: number;
}

/** Kuma's list page: `{total, items, next}`. */
interface ListPage {
  items?: unknown[];
  next?: string | null;
}

export async function requestJson(target: RestTarget, method: string, path: string, body?: string, contentType = "application/json"): Promise<{ status: number; body: unknown }> {
  const url = path.startsWith("http") ? path : `${target.url}${path}`;
  const headers: Record<string, string> = { accept: "application/json" };
  if (target.token) headers.authorization = `Bearer ${target.token}`;
  if (body !== undefined) headers["content-type"] = contentType;
  let res: Response;
  try {
    res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(target.timeoutMs ?? 10_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new RestError(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the error message.
  }
  return { status: res.status, body: parsed };
}

/** GET that must answer 200; a Kuma error body's title/detail (and invalid_parameters) become the message. */
export async function getJson(target: RestTarget, path: string): Promise<unknown> {
  const { status, body } = await requestJson(target, "GET", path);
  if (status !== 200) throw new RestError(`GET ${path}: ${status} ${errorText(body)}`, status, body);
  return body;
}

/** Every item of a paged list, following `next`. */
export async function listAll(target: RestTarget, path: string, maxPages = 1000): Promise<unknown[]> {
  const items: unknown[] = [];
  let next: string | undefined = path;
  for (let page = 0; next && page < maxPages; page++) {
    const body = (await getJson(target, next)) as ListPage;
    items.push(...(body.items ?? []));
    next = body.next ?? undefined;
  }
  return items;
}

/** The readable part of an error answer: Kuma's `{title, detail, invalid_parameters}` or meshext's `{error}`. */
export function errorText(body: unknown): string {
  if (typeof body !== "object" || body === null) return String(body ?? "");
  const b = body as { title?: string; detail?: string; error?: string; invalid_parameters?: Array<{ field: string; reason?: string; message?: string }> };
  const head = [b.title, b.detail, b.error].filter(Boolean).join(": ");
  const fields = (b.invalid_parameters ?? []).map((p) => `${p.field}: ${p.reason ?? p.message ?? ""}`);
  return [head, ...fields].filter(Boolean).join("; ") || JSON.stringify(body);
}

/** --control-plane and --token as every REST command takes them. */
export const CONTROL_PLANE_FLAGS = [
  { key: "controlPlane", flag: "control-plane", type: "url", default: "http://127.0.0.1:5681", help: "Control plane REST API URL (the embedded one, or Kuma's)." },
  { key: "token", flag: "token", type: "string", default: "", help: "Bearer token for the control plane (its --token); prefer MESHEXT_TOOLS_TOKEN over the command line." },
] as const;
