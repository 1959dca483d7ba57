// Run by netns.ts inside a network namespace: one fetch, its status and body (or error) as JSON on stdout.
const { url, method, headers, body, timeoutMs } = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
};
try {
  const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(timeoutMs ?? 3000) });
  const text = await res.text();
  process.stdout.write(JSON.stringify({ status: res.status, body: text, atMs: Date.now() }));
} catch (err) {
  const e = err as Error & { cause?: { code?: string } };
  process.stdout.write(JSON.stringify({ error: e.cause?.code ?? e.name ?? e.message }));
}
