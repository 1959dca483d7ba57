// A control plane scripted by a test, in process, for HttpPolicySource's follow loop: lists with an ETag each,
// long-polls held until a change (or answered as the test's script says), the API root and a dataplane's set;
// every request recorded, with when it came and whether the client has closed it.
import type { ExecutionContext } from "ava";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../extproc/log.js";

export interface Seen {
  /** list: a list page; watch: a list long-poll; root: GET /; set / set-watch: the dataplane's set, read or long-polled. */
  kind: "list" | "watch" | "root" | "set" | "set-watch";
  /** The list's plural ("meshes" for the Mesh list). */
  plural: string;
  /** The `wait` query parameter of a long-poll, e.g. "30000ms". */
  wait?: string;
  ifNoneMatch?: string;
  at: number;
  /** Whether the connection carrying it has closed (the client gave up on it, or it was answered and closed). */
  closed: boolean;
  answered: boolean;
  reply(status: number, headers?: Record<string, string>, body?: unknown): void;
}

export interface ScriptedCp {
  url: string;
  seen: Seen[];
  /** Items served per plural (empty when unset). */
  items: Map<string, unknown[]>;
  /** Plurals answered 404 (a control plane without that optional list). */
  missing: Set<string>;
  /** Whether lists carry an ETag (default true); without, the source polls. */
  etags: boolean;
  /** Features listed by GET / (none: GET / answers 404, as a Kuma-compatible server with lists only). */
  features: string[];
  /**
   * Answers a request before the default does (reply() in it, or return "hold" to keep it open); returning
   * undefined leaves it to the default: lists and the set served, a long-poll answered 200 once its list changed
   * since its If-None-Match, else held until change() or the test's end.
   */
  script: ((seen: Seen) => "hold" | void) | undefined;
  /** The current ETag of a list. */
  etag(plural: string): string;
  /** Serves `items` for `plural` under a new ETag and answers the long-polls held on it. */
  change(plural: string, items: unknown[]): void;
  /** Requests of one kind (and plural). */
  of(kind: Seen["kind"], plural?: string): Seen[];
}

export const SET_PATH = "/meshes/default/dataplanes/";

export async function scriptedCp(t: ExecutionContext): Promise<ScriptedCp> {
  const versions = new Map<string, number>();
  const held: Seen[] = [];
  const cp: ScriptedCp = {
    url: "",
    seen: [],
    items: new Map(),
    missing: new Set(),
    etags: true,
    features: [],
    script: undefined,
    etag: (plural) => `"${plural}-${versions.get(plural) ?? 1}"`,
    change(plural, items) {
      cp.items.set(plural, items);
      versions.set(plural, (versions.get(plural) ?? 1) + 1);
      for (const s of held.splice(0)) if (!s.answered) answerWatch(s);
    },
    of: (kind, plural) => cp.seen.filter((s) => s.kind === kind && (plural === undefined || s.plural === plural)),
  };
  const list = (plural: string) => ({ total: (cp.items.get(plural) ?? []).length, items: cp.items.get(plural) ?? [], next: null });
  const answerWatch = (s: Seen) => {
    if (s.ifNoneMatch !== cp.etag(s.plural)) s.reply(200, { etag: cp.etag(s.plural) }, list(s.plural));
    else held.push(s);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const seg = url.pathname.split("/").filter(Boolean);
    const isSet = url.pathname.startsWith(SET_PATH) && seg[4] === "_policy-set";
    const wait = url.searchParams.get("wait") ?? undefined;
    const kind: Seen["kind"] = url.pathname === "/" ? "root" : isSet ? (wait ? "set-watch" : "set") : wait ? "watch" : "list";
    const plural = isSet ? "_policy-set" : seg.length === 1 ? "meshes" : (seg[2] ?? "");
    const s: Seen = { kind, plural, wait, ifNoneMatch: req.headers["if-none-match"], at: Date.now(), closed: false, answered: false, reply: (status, headers, body) => send(s, res, status, headers, body) };
    res.on("close", () => (s.closed = true));
    cp.seen.push(s);
    if (cp.script?.(s) === "hold" || s.answered) return;
    if (kind === "root") return cp.features.length > 0 ? s.reply(200, {}, { version: "scripted", features: cp.features }) : s.reply(404, {}, {});
    if (isSet) return s.reply(404, {}, { title: "Not Found" });
    if (cp.missing.has(plural)) return s.reply(404, {}, { title: "Not Found" });
    if (kind === "watch") return answerWatch(s);
    s.reply(200, cp.etags ? { etag: cp.etag(plural) } : {}, list(plural));
  });
  const send = (s: Seen, res: ServerResponse, status: number, headers: Record<string, string> = {}, body?: unknown) => {
    if (s.answered || res.destroyed) return;
    s.answered = true;
    res.writeHead(status, { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers }).end(body === undefined ? undefined : JSON.stringify(body));
  };
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cp.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return cp;
}

/** Polls `check` until it holds or `timeoutMs` passes; whether it held. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return check();
}

/** A debug-level logger whose JSON lines a test reads back. */
export function recordedLog(): { log: Logger; lines: (msg?: string) => Array<Record<string, unknown>> } {
  let text = "";
  const sink = new Writable({ write: (chunk, _enc, done) => ((text += chunk.toString()), done()) });
  const all = () => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log: createLogger("debug", sink), lines: (msg) => all().filter((l) => msg === undefined || l.msg === msg) };
}
