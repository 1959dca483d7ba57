// Heartbeats and the store's write queue: a heartbeat that changes nothing persisted is answered without
// waiting behind other resources' durable writes, and one for a Dataplane with a write queued still waits its turn.
import test from "ava";
import { DATAPLANE_TYPE, POLICY_TYPES } from "../../extproc/kuma-rest/resources.js";
import { DataplaneRegistry } from "../../extproc/control-plane/dataplanes.js";
import { ResourceStore } from "../../extproc/control-plane/store.js";
import { silentLogger } from "../../extproc/log.js";
import { dataplane, mtp, tempDir } from "./helpers.js";

const MTP = POLICY_TYPES.find((t) => t.kind === "MeshTrafficPermission")!;

async function registry(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await tempDir();
  const store = await ResourceStore.open(dir.path, silentLogger());
  const dataplanes = new DataplaneRegistry(store, { offlineTimeoutMs: 30_000, offlineGcAgeMs: 3_600_000 }, silentLogger());
  t.teardown(async () => {
    await store.flush();
    await dir.remove();
  });
  return { store, dataplanes };
}

test("heartbeat queue › a heartbeat that changes nothing is answered before a policy write queued ahead of it is durable", async (t) => {
  const { store, dataplanes } = await registry(t);
  await dataplanes.register("default", "dp-1", dataplane("dp-1"));
  // given policy writes queued in the store (each a file written and fsynced)
  const order: string[] = [];
  const writes = Array.from({ length: 5 }, (_, i) => store.put(MTP, { ...mtp(`p-${i}`), mesh: "default", name: `p-${i}` }).then(() => order.push(`write p-${i}`)));
  t.true(store.hasPendingWrite(MTP.kind, "default", "p-0"));
  // when the online Dataplane heartbeats
  const beat = dataplanes.heartbeat("default", "dp-1", undefined).then((r) => (order.push("heartbeat"), r));
  const reply = await beat;
  await Promise.all(writes);
  // then it is answered first, online, and the writes all land
  t.is(order[0], "heartbeat", order.join(", "));
  t.is((reply.status as { state: string }).state, "online");
  t.is(order.length, 6);
  t.false(store.hasPendingWrite(MTP.kind, "default", "p-0"));
});

test("heartbeat queue › a heartbeat for a Dataplane with its own write queued waits for it and applies after it", async (t) => {
  const { store, dataplanes } = await registry(t);
  await dataplanes.register("default", "dp-1", dataplane("dp-1"));
  // given a re-registration as draining queued (every inbound NotReady)
  const draining = dataplane("dp-1") as { networking: { inbound: Array<Record<string, unknown>> } };
  draining.networking.inbound = draining.networking.inbound.map((ib) => ({ ...ib, state: "NotReady" }));
  const reregistered = dataplanes.register("default", "dp-1", draining as unknown as Record<string, unknown>);
  t.true(store.hasPendingWrite(DATAPLANE_TYPE.kind, "default", "dp-1"));
  // when a heartbeat says online
  const reply = await dataplanes.heartbeat("default", "dp-1", "online");
  await reregistered;
  // then it went after the re-registration: the Dataplane is online, as the last word says
  t.is((reply.status as { state: string }).state, "online");
  t.is((store.get(DATAPLANE_TYPE.kind, "default", "dp-1")!.status as { state: string }).state, "online");
});
