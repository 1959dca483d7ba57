// Long-poll bursts spread over turns of the event loop: callbacks run a few per turn, and the notifier
// releases waiters — woken by a change, or at the end of their wait — that way, so other work goes between.
import test from "ava";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { TURN_SLICE, TurnSlices } from "../../extproc/control-plane/turn-slices.js";
import { ChangeNotifier, collectionKey } from "../../extproc/control-plane/watch.js";
import { eventually } from "./helpers.js";

/** Resolves when the event loop has gone round once more (after the immediates queued so far). */
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

test("turn slices › a burst runs TURN_SLICE callbacks per turn, in order, with other work between slices", async (t) => {
  const slices = new TurnSlices();
  const ran: number[] = [];
  // given a burst of 2.5 slices' worth of callbacks
  const burst = Math.floor(TURN_SLICE * 2.5);
  for (let i = 0; i < burst; i++) slices.run(() => ran.push(i));
  t.is(slices.pending, burst);
  // when the loop turns, then one slice has run
  await nextTurn();
  t.deepEqual(ran, Array.from({ length: TURN_SLICE }, (_, i) => i));
  // and an immediate queued now runs before the next slice is done (it goes between slices)
  let between = -1;
  setImmediate(() => (between = ran.length));
  await eventually(() => slices.pending === 0);
  t.true(between >= TURN_SLICE && between < burst, `other work ran after ${between} of ${burst}`);
  t.deepEqual(ran, Array.from({ length: burst }, (_, i) => i));
});

test("turn slices › next() resolves in its place in the queue", async (t) => {
  const slices = new TurnSlices(2);
  const order: string[] = [];
  slices.run(() => order.push("a"));
  slices.run(() => order.push("b"));
  // given two callbacks queued, when a request takes its turn
  const taken = slices.next().then(() => [...order]);
  slices.run(() => order.push("c"));
  // then it resolves after those queued before it, in a later turn than the first slice
  t.deepEqual(order, []);
  t.deepEqual((await taken).slice(0, 2), ["a", "b"]);
  await eventually(() => slices.pending === 0 && order.length === 3);
});

test("turn slices › 1 000 waits ending at the same moment are released across turns, not in one", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  const never = new Promise<void>(() => {});
  let released = 0;
  let releasedWhenOtherWorkRan = -1;
  // given 1 000 long-poll waits on one collection, all ending together
  const waits = Array.from({ length: 1000 }, () =>
    notifier.wait(collectionKey("MeshTrafficPermission", "default"), 50, never).then(() => {
      // when the first is released, other work is queued: it must not wait for all 1 000
      if (released++ === 0) setImmediate(() => (releasedWhenOtherWorkRan = released));
    }),
  );
  await Promise.all(waits);
  // then all are released, and the other work ran while most were still held
  t.is(released, 1000);
  t.true(releasedWhenOtherWorkRan > 0 && releasedWhenOtherWorkRan <= 2 * TURN_SLICE, `other work ran after ${releasedWhenOtherWorkRan} releases`);
});

test("turn slices › a change waking 1 000 waiters releases them across turns, other work going between", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  const never = new Promise<void>(() => {});
  const key = collectionKey("MeshTrafficPermission", "default");
  let released = 0;
  let releasedWhenOtherWorkRan = -1;
  const waits = Array.from({ length: 1000 }, () =>
    notifier.wait(key, 60_000, never).then(() => {
      if (released++ === 0) setImmediate(() => (releasedWhenOtherWorkRan = released));
    }),
  );
  // when the collection changes
  notifier.notify("MeshTrafficPermission", "default");
  t.is(released, 0, "nobody is released in the turn of the change itself");
  await Promise.all(waits);
  t.is(released, 1000);
  t.true(releasedWhenOtherWorkRan > 0 && releasedWhenOtherWorkRan <= 2 * TURN_SLICE, `other work ran after ${releasedWhenOtherWorkRan} releases`);
});

test("turn slices › given a burst, when the loop turns, then pending counts down one slice a turn", async (t) => {
  const slices = new TurnSlices(4);
  for (let i = 0; i < 10; i++) slices.run(() => {});
  t.is(slices.pending, 10);
  await nextTurn();
  t.is(slices.pending, 6);
  await nextTurn();
  t.is(slices.pending, 2);
  await nextTurn();
  t.is(slices.pending, 0);
});

test("turn slices › given a callback that queues another while its slice runs, when the loop turns, then the new one runs after those queued before it", async (t) => {
  const slices = new TurnSlices(2);
  const order: string[] = [];
  slices.run(() => {
    order.push("a");
    slices.run(() => order.push("late"));
  });
  slices.run(() => order.push("b"));
  slices.run(() => order.push("c"));
  await eventually(() => slices.pending === 0 && order.length === 4);
  t.deepEqual(order, ["a", "b", "c", "late"]);
  // and a queue drained empty takes new work again
  await slices.next();
  t.is(slices.pending, 0);
});

test("turn slices › given a callback that throws, when its slice runs, then the callbacks after it still run", async (t) => {
  const thrown: unknown[] = [];
  process.setUncaughtExceptionCaptureCallback((error) => thrown.push(error));
  t.teardown(() => process.setUncaughtExceptionCaptureCallback(null));
  const slices = new TurnSlices(1);
  const ran: string[] = [];
  slices.run(() => {
    throw new Error("boom");
  });
  slices.run(() => ran.push("after"));
  await slices.next();
  t.deepEqual(ran, ["after"]);
  t.is((thrown[0] as Error).message, "boom");
});

test.serial("turn slices › given a drained queue, when the loop turns on, then nothing more is scheduled (an idle queue neither spins nor holds the process)", async (t) => {
  const immediates = () => process.getActiveResourcesInfo().filter((r) => r === "Immediate").length;
  const slices = new TurnSlices(2);
  for (let i = 0; i < 3; i++) slices.run(() => {});
  await slices.next();
  await nextTurn();
  await nextTurn();
  t.is(slices.pending, 0);
  t.is(immediates(), 0);
});

test.serial("turn slices › given a queue that has drained, when memory is collected, then it holds none of the callbacks run (a held request's closure is let go once answered)", async (t) => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const slices = new TurnSlices(2);
  let ref!: WeakRef<object>;
  // a callback closing over an object, then two more: two slices drain the queue
  (() => {
    const held = { payload: new Array(1000).fill(0) };
    ref = new WeakRef(held);
    slices.run(() => void held.payload.length);
  })();
  slices.run(() => {});
  slices.run(() => {});
  await slices.next();
  await nextTurn();
  gc();
  await nextTurn();
  gc();
  t.is(ref.deref(), undefined);
});
