// request targets › a request whose target `new URL` refuses (`//`, `http://`) is answered, never a TypeError that
// ends the process: the control plane and the sidecar's admin server keep serving (the webhook: test/webhook).
import test from "ava";
import { request } from "node:http";
import { AdminServer, json } from "../../extproc/admin/server.js";
import { silentLogger } from "../../extproc/log.js";
import { BAD_TARGET_MESSAGE, requestUrl } from "../../extproc/request-target.js";
import { startTestControlPlane, tempDir } from "../control-plane/helpers.js";

/** One GET with `target` sent as written (node's client puts a request's path on the request line as it is). */
function rawGet(base: string, target: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port: Number(port), path: target, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("request targets › given origin-form targets, when read, then `//x` is the path //x on the base, not the host x", (t) => {
  t.is(requestUrl("//x/y?a=1", "http://admin")?.href, "http://admin//x/y?a=1");
  t.is(requestUrl("//", "http://admin")?.pathname, "//");
  t.is(requestUrl(undefined, "http://admin")?.pathname, "/");
  t.is(requestUrl("/drain?wait=1", "http://admin")?.searchParams.get("wait"), "1");
});

test("request targets › given absolute-form and asterisk targets, when read, then a URL where one can be made, else undefined", (t) => {
  t.is(requestUrl("http://other:9/ready", "http://admin")?.pathname, "/ready");
  t.is(requestUrl("*", "http://admin")?.pathname, "/*");
  t.is(requestUrl("http://", "http://admin"), undefined);
});

test("request targets › given the control plane, when `GET //` and `GET http://` arrive, then each is answered and the next request is served", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  t.is((await rawGet(cp.url, "//")).status, 200, "the root, as `/`");
  const bad = await rawGet(cp.url, "http://");
  t.is(bad.status, 400);
  t.like(JSON.parse(bad.body), { status: 400, title: "Bad Request", detail: BAD_TARGET_MESSAGE });
  t.is((await fetch(`${cp.url}/meshes`)).status, 200);
});

test("request targets › given the sidecar's admin server, when `GET //` and `GET http://` arrive, then 404 and 400, and /ready still answers", async (t) => {
  const admin = new AdminServer(silentLogger());
  admin.route("GET", "/ready", () => json(200, { ready: true }));
  const { port } = await admin.listen("127.0.0.1:0");
  t.teardown(() => admin.close());
  const base = `http://127.0.0.1:${port}`;
  t.is((await rawGet(base, "//")).status, 404);
  const bad = await rawGet(base, "http://");
  t.is(bad.status, 400);
  t.deepEqual(JSON.parse(bad.body), { error: BAD_TARGET_MESSAGE });
  t.is((await fetch(`${base}/ready`)).status, 200);
});
