// KumaClient against a scripted control plane: failure classes and messages, long-poll outcomes, list body checks, size/token headers.
import test from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { POLICY_TYPES } from "../../extproc/kuma-rest/resources.js";
import { KumaClient, SyncError } from "../../extproc/policy-source/kuma-client.js";
import type { SyncErrorReason } from "../../extproc/policy-source/metrics.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function controlPlane(handler: Handler): Promise<{ url: string; seen: IncomingMessage[]; close: () => Promise<void> }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function reply(status: number, body = "", headers: Record<string, string> = {}): Handler {
  return (_req, res) => { res.writeHead(status, headers); res.end(body); };
}

const type = () => POLICY_TYPES[0]!;

async function listError(handler: Handler, opts: { token?: string } = {}): Promise<SyncError> {
  const cp = await controlPlane(handler);
  try {
    const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20, ...opts });
    const err = await client.listAll(type()).then(() => undefined, (e: unknown) => e);
    if (!(err instanceof SyncError)) throw new Error(`expected a SyncError, got ${String(err)}`);
    return err;
  } finally {
    await cp.close();
  }
}

test("kuma client › given a failing status, then the error names its class, the request and the status, and carries Retry-After where it applies", async (t) => {
  const path = `/meshes/default/${type().plural}`;
  const cases: Array<[number, Record<string, string>, SyncErrorReason, string, number | undefined, boolean]> = [
    [401, {}, "unauthorized", `GET ${path}: 401 Unauthorized (check --control-plane-token)`, undefined, true],
    [403, {}, "forbidden", `GET ${path}: 403 Forbidden (the token may not read policies)`, undefined, true],
    [429, { "retry-after": "7" }, "rate_limited", `GET ${path}: 429 Too Many Requests`, 7000, false],
    [500, { "retry-after": "3" }, "server_error", `GET ${path}: 500`, 3000, false],
    [503, {}, "server_error", `GET ${path}: 503`, undefined, false],
    [499, { "retry-after": "3" }, "client_error", `GET ${path}: unexpected status 499`, undefined, false],
    [302, {}, "client_error", `GET ${path}: unexpected status 302`, undefined, false],
  ];
  for (const [status, headers, reason, message, retry, fatal] of cases) {
    const err = await listError(reply(status, "", headers));
    t.is(err.name, "SyncError", `${status}`);
    t.is(err.reason, reason, `${status}`);
    t.is(err.message, message, `${status}`);
    t.is(err.retryAfterMs, retry, `${status}`);
    t.is(err.fatal, fatal, `${status}`);
  }
});

test("kuma client › given a 200 whose body is no Kuma list, then a bad_response naming the list", async (t) => {
  const path = `/meshes/default/${type().plural}`;
  for (const body of ["null", "42", '"items"', "{}", '{"items": {}}', '{"items": null}']) {
    const err = await listError(reply(200, body, { "content-type": "application/json" }));
    t.is(err.reason, "bad_response", body);
    t.is(err.message, `${path}: expected a Kuma list {total, items, next}`, body);
  }
  const broken = await listError(reply(200, "{not json", { "content-type": "application/json" }));
  t.is(broken.reason, "bad_response");
  t.true(broken.message.startsWith(`${path}: could not read the list body: `), broken.message);
});

test("kuma client › given a list whose next is empty or not a string, then the list ends there", async (t) => {
  for (const next of ['""', "null", "42", "{}"]) {
    const cp = await controlPlane(reply(200, `{"total": 1, "items": [{"type": "X", "mesh": "default", "name": "a"}], "next": ${next}}`));
    try {
      const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20 });
      const list = await client.listAll(type());
      t.deepEqual(list.items.map((i) => i.name), ["a"], next);
      t.is(cp.seen.length, 1, `${next}: one page read`);
    } finally {
      await cp.close();
    }
  }
});

test("kuma client › given a page size and a token, then each list request asks for that size and sends the token as a bearer; the ETag of the first page is kept", async (t) => {
  let n = 0;
  const cp = await controlPlane((req, res) => {
    n++;
    res.writeHead(200, { etag: `"e${n}"` });
    res.end(n === 1 ? '{"items": [], "next": "http://elsewhere/x?offset=5&size=5"}' : '{"items": [], "next": null}');
  });
  try {
    const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20, pageSize: 5, token: "s3cret" });
    const list = await client.listAll(type());
    t.is(list.etag, '"e1"');
    t.is(cp.seen.length, 2);
    for (const req of cp.seen) {
      t.is(new URL(req.url!, cp.url).searchParams.get("size"), "5");
      t.is(req.headers.authorization, "Bearer s3cret");
      t.is(req.headers.accept, "application/json");
    }
    t.is(new URL(cp.seen[1]!.url!, cp.url).searchParams.get("offset"), "5");
    t.is(new URL(client.listUrl(type()).toString()).searchParams.get("size"), "5");
    t.is(new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 }).listUrl(type()).searchParams.get("size"), "100");
  } finally {
    await cp.close();
  }
});

test("kuma client › given an optional list, then a 404 on the first page is an empty missing list; without optional it is a client error", async (t) => {
  const cp = await controlPlane(reply(404, "not found"));
  try {
    const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20 });
    t.deepEqual(await client.listAll(type(), undefined, true), { items: [], missing: true });
    const err = await client.listAll(type()).then(() => undefined, (e: unknown) => e);
    t.true(err instanceof SyncError);
    t.is((err as SyncError).reason, "client_error");
  } finally {
    await cp.close();
  }
});

test("kuma client › given a long-poll, then 304 is unchanged, 200 with another ETag is changed, the same ETag unsupported, and other statuses fail as a watch", async (t) => {
  const path = `/meshes/default/${type().plural}`;
  const cases: Array<[number, Record<string, string>, "changed" | "unchanged" | "unsupported"]> = [
    [304, {}, "unchanged"],
    [200, { etag: '"v2"' }, "changed"],
    [200, {}, "changed"],
    [200, { etag: '"v1"' }, "unsupported"],
  ];
  for (const [status, headers, want] of cases) {
    const cp = await controlPlane(reply(status, status === 200 ? '{"items": []}' : "", headers));
    try {
      const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20 });
      t.is(await client.waitForChange(type(), '"v1"', 1500, new AbortController().signal), want, `${status} ${JSON.stringify(headers)}`);
      t.is(cp.seen[0]!.headers["if-none-match"], '"v1"');
      t.is(new URL(cp.seen[0]!.url!, cp.url).searchParams.get("wait"), "1500ms");
    } finally {
      await cp.close();
    }
  }
  for (const [status, reason] of [[500, "server_error"], [401, "unauthorized"], [404, "client_error"]] as const) {
    const cp = await controlPlane(reply(status));
    try {
      const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20 });
      const err = await client.waitForChange(type(), '"v1"', 10, new AbortController().signal).then(() => undefined, (e: unknown) => e);
      t.true(err instanceof SyncError, `${status}`);
      t.is((err as SyncError).reason, reason);
      t.true((err as SyncError).message.startsWith(`GET ${path} (watch): `), (err as SyncError).message);
    } finally {
      await cp.close();
    }
  }
});

test("kuma client › given no answer in time, then a timeout error naming the request; given nobody listening, then a network error naming where", async (t) => {
  const cp = await controlPlane(() => undefined);
  const path = `/meshes/default/${type().plural}`;
  try {
    const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20, requestTimeoutMs: 50 });
    const err = (await client.listAll(type()).then(() => undefined, (e: unknown) => e)) as SyncError;
    t.true(err instanceof SyncError);
    t.is(err.reason, "timeout");
    t.is(err.message, `GET ${path}: no answer within 50ms`);
  } finally {
    await cp.close();
  }
  const gone = await controlPlane(() => undefined);
  await gone.close();
  const client = new KumaClient({ baseUrl: gone.url, mesh: "default", maxListBytes: 1 << 20 });
  const err = (await client.listAll(type()).then(() => undefined, (e: unknown) => e)) as SyncError;
  t.true(err instanceof SyncError);
  t.is(err.reason, "network");
  t.is(err.message, `GET ${gone.url}${path}: ECONNREFUSED`);
});

test("kuma client › given a caller that aborts, then the abort itself is thrown, not a network error", async (t) => {
  const cp = await controlPlane(() => undefined);
  try {
    const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20 });
    const ac = new AbortController();
    const reason = new Error("stopping");
    const pending = client.listAll(type(), ac.signal).then(() => undefined, (e: unknown) => e);
    while (cp.seen.length === 0) await new Promise((r) => setImmediate(r));
    ac.abort(reason);
    t.is(await pending, reason);
  } finally {
    await cp.close();
  }
});

test("kuma client › given a list body exactly as large as the budget, then it is read; one byte more (announced or streamed) is too large", async (t) => {
  const body = '{"items": []}';
  const cases: Array<[number, boolean, boolean]> = [
    [body.length, true, true],
    [body.length, false, true],
    [body.length - 1, true, false],
    [body.length - 1, false, false],
  ];
  for (const [limit, announce, ok] of cases) {
    const cp = await controlPlane((_req, res) => {
      if (announce) res.writeHead(200, { "content-length": String(body.length) });
      else res.writeHead(200, { "transfer-encoding": "chunked" });
      res.end(body);
    });
    try {
      const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: limit });
      const got = await client.listAll(type()).then((l) => l, (e: unknown) => e);
      if (ok) t.deepEqual(got, { items: [] }, `${limit} announce=${announce}`);
      else {
        t.true(got instanceof SyncError, `${limit} announce=${announce}`);
        t.is((got as SyncError).reason, "bad_response");
        t.regex((got as SyncError).message, new RegExp(`list larger than ${limit} bytes`));
      }
    } finally {
      await cp.close();
    }
  }
});
