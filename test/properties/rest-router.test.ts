// Properties of the control plane's REST router and store paths: any method, path and body gets a problem
// (4xx) or an answer, never an unexpected error; any name the API accepts is stored inside the data dir
// and read back as written.
import test from "ava";
import fc from "fast-check";
import { DEFAULT_KUMA_VERSION } from "../../extproc/kuma-rest/kuma-version.js";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { silentLogger } from "../../extproc/log.js";
import { DataplaneRegistry } from "../../extproc/control-plane/dataplanes.js";
import { DecisionSamples } from "../../extproc/control-plane/decision-samples.js";
import { ApiError } from "../../extproc/control-plane/problems.js";
import { route, type RouteContext } from "../../extproc/control-plane/routes.js";
import { PolicySetIndex } from "../../extproc/control-plane/policy-sets.js";
import { DEFAULT_BODY_LIMITS } from "../../extproc/control-plane/safety.js";
import { ResourceStore } from "../../extproc/control-plane/store.js";
import { nameViolations } from "../../extproc/control-plane/validate.js";
import { ChangeNotifier } from "../../extproc/control-plane/watch.js";
import { mtp, tempDir } from "../control-plane/helpers.js";
import { budget } from "./budget.js";

async function context(t: import("ava").ExecutionContext): Promise<RouteContext> {
  const dir = await tempDir();
  const store = await ResourceStore.open(dir.path, silentLogger());
  const notifier = new ChangeNotifier();
  const dataplanes = new DataplaneRegistry(store, { offlineTimeoutMs: 30_000, offlineGcAgeMs: 3_600_000 }, silentLogger());
  t.teardown(async () => {
    notifier.close();
    await store.flush();
    await dir.remove();
  });
  return { store, dataplanes, notifier, policySets: new PolicySetIndex(store, notifier, DEFAULT_KUMA_VERSION), decisionSamples: new DecisionSamples({ perDataplane: 100, maxBytes: 1 << 20 }), token: "", limits: DEFAULT_BODY_LIMITS, version: "test", kumaVersion: DEFAULT_KUMA_VERSION };
}

const never = new Promise<void>(() => {});
const segment = fc.oneof(
  fc.constantFrom("meshes", "default", "meshtrafficpermissions", "dataplanes", "containerpatches", "_heartbeat", "_decision-samples", "_resources", "meshhttproutes", "%", "%zz", "%E0%A4", "..", ".", "a%2Fb"),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.string({ maxLength: 12 }),
);
const body = fc.oneof(fc.string({ maxLength: 200 }), fc.constant(JSON.stringify(mtp("p"))), fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)));

test("properties › the REST router answers every request with a status or a problem, never an unexpected error", async (t) => {
  const ctx = await context(t);
  await fc.assert(
    fc.asyncProperty(fc.constantFrom("GET", "PUT", "DELETE", "POST", "PATCH"), fc.array(segment, { maxLength: 6 }), fc.string({ maxLength: 30 }), body, async (method, segs, query, text) => {
      let url: URL;
      try {
        url = new URL(`http://cp/${segs.join("/")}?${query}`);
      } catch {
        return true; // not a URL a client could send
      }
      try {
        const reply = await route(ctx, { method, url, headers: {}, body: async () => Buffer.from(text), abandoned: never });
        return reply.status >= 200 && reply.status < 400;
      } catch (err) {
        return err instanceof ApiError && err.status >= 400 && err.status < 500;
      }
    }),
    budget(300),
  );
  t.pass();
});

test("properties › a name the API accepts is stored under the data dir and read back unchanged", async (t) => {
  const ctx = await context(t);
  // Names the Kuma 2.14 policy validator accepts (RFC 1123: lowercase); the store's own limit still applies.
  const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,60}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,60}[a-z0-9])?){0,4}$/);
  await fc.assert(
    fc.asyncProperty(name, async (n) => {
      const url = new URL(`http://cp/meshes/default/meshtrafficpermissions/${encodeURIComponent(n)}`);
      const put = () => route(ctx, { method: "PUT", url, headers: {}, body: async () => Buffer.from(JSON.stringify(mtp(n))), abandoned: never });
      if (nameViolations("name", n).length > 0) {
        await put().then(
          () => {
            throw new Error(`accepted ${n}`);
          },
          (err: unknown) => {
            if (!(err instanceof ApiError) || err.status !== 400) throw err;
          },
        );
        return true;
      }
      const stored = await put();
      const file = resolve(join(ctx.store.dataDir, "meshes", "default", "meshtrafficpermissions", `${n}.yaml`));
      const got = await route(ctx, { method: "GET", url, headers: {}, body: async () => Buffer.alloc(0), abandoned: never });
      return (stored.status === 201 || stored.status === 200) && file.startsWith(resolve(ctx.store.dataDir) + "/") && existsSync(file) && (got.body as { name: string }).name === n;
    }),
    budget(40),
  );
  t.pass();
});
