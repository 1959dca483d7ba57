// The sidecar's side of the /drain contract matches the wasm filter's (wasm/contract.json).
import test from "ava";
import { readFileSync } from "node:fs";
import { drainStatusJson } from "../../extproc/drain/routes.js";
import { SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";

const contract = JSON.parse(readFileSync(new URL("../../../wasm/contract.json", import.meta.url), "utf8")) as Record<string, string>;

test("drain › /drain JSON has exactly the fields the wasm filter reads", (t) => {
  const body = drainStatusJson({ phase: "draining", mode: "drain", sinceMs: 0, deadlineMs: 30_000, drainedAtMs: undefined, inflightAtExit: undefined });
  t.deepEqual(Object.keys(body).sort(), [contract.drainFieldDraining, contract.drainFieldSince, contract.drainFieldDeadline].sort());
  t.deepEqual(body, { draining: true, since: "1970-01-01T00:00:00.000Z", deadline: "1970-01-01T00:00:30.000Z" });
});

test("drain › the filter's default authority is the sidecar's default admin address", (t) => {
  t.is(contract.drainPath, "/drain");
  t.is(String(SIDECAR_FLAGS.find((f) => f.key === "adminListen")?.default), contract.defaultAuthority);
});
