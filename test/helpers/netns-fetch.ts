// Run by netns.ts inside a network namespace as a fetch agent: one JSON request per stdin line
// ({id, url, method, headers, body, timeoutMs}), one JSON result per stdout line ({id, status, body, atMs}
// or {id, error}). One long-lived process per namespace keeps each request cheap.
import { createInterface } from "node:readline";

interface FetchRequest {
  id: number;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

async function handle(r: FetchRequest): Promise<Record<string, unknown>> {
  try {
    const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(r.timeoutMs ?? 3000) });
    const text = await res.text();
    return { id: r.id, status: res.status, body: text, atMs: Date.now() };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { id: r.id, error: e.cause?.code ?? e.name ?? e.message };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "") continue;
  void handle(JSON.parse(line) as FetchRequest).then((out) => process.stdout.write(JSON.stringify(out) + "\n"));
}
