// Several worker VMs of one Envoy process: one poll per period (CAS lease in shared data), and every
// VM adopts the state stored in shared data, so they all agree.
import test from "ava";
import { EnvoyProcess } from "../helpers/proxy-wasm-host.js";
import { CONTRACT, drainBody, exchange, startFilter } from "./fixtures.js";

function workers(count: number) {
  const process = new EnvoyProcess();
  return { process, vms: Array.from({ length: count }, () => startFilter("", process)) };
}

test("shared vms › only one of several VMs polls each period", (t) => {
  // given three workers whose ticks fall due together
  const { process, vms } = workers(3);
  // when the period passes and each ticks
  process.clock.advance(1000);
  for (const vm of vms) vm.tick();
  // then exactly one issued the poll
  t.is(vms.reduce((n, vm) => n + vm.pendingHttpCalls().length, 0), 1);
});

test("shared vms › the state one VM polled reaches all VMs on their next tick", (t) => {
  const { process, vms } = workers(3);
  process.clock.advance(1000);
  for (const vm of vms) vm.tick();
  const poller = vms.find((vm) => vm.pendingHttpCalls().length === 1)!;
  // when the poller learns the drain
  poller.respondHttpCall(poller.pendingHttpCalls()[0]!.token, { body: drainBody(true, "2024-05-11T09:59:00Z") });
  // then the others still serve until they tick...
  const other = vms.find((vm) => vm !== poller)!;
  t.is(other.responseHeader(exchange(other), "connection"), undefined);
  process.clock.advance(100);
  for (const vm of vms) vm.tick();
  // ...and then every VM closes HTTP/1.1 responses
  for (const vm of vms) t.is(vm.responseHeader(exchange(vm), "connection"), "close");
  // and the shared gauges/counters aggregate across VMs
  t.is(vms[0]!.metric(CONTRACT.metricDraining), 1);
  process.clock.advance(1000); // each VM hands its counted closes to the host on its tick
  for (const vm of vms) vm.tick();
  t.is(vms[0]!.metric(CONTRACT.metricCloseResponses), 3);
  t.is(vms[0]!.metric(CONTRACT.metricStartedSeconds), Date.UTC(2024, 4, 11, 9, 59) / 1000);
});

test("shared vms › an older poll result never overwrites a newer one", (t) => {
  // given two VMs polling in consecutive periods (the first answer delayed)
  const { process, vms } = workers(2);
  const [a, b] = vms as [ReturnType<typeof startFilter>, ReturnType<typeof startFilter>];
  process.clock.advance(1000);
  a.tick();
  process.clock.advance(1000);
  b.tick();
  t.is(a.pendingHttpCalls().length + b.pendingHttpCalls().length, 2);
  // when the newer poll (draining) lands before the older one (serving)
  b.respondHttpCall(b.pendingHttpCalls()[0]!.token, { body: drainBody(true) });
  a.respondHttpCall(a.pendingHttpCalls()[0]!.token, { body: drainBody(false) });
  // then shared data keeps the newer state and both VMs drain
  t.is(process.sharedData.get("meshext_drain.state")?.value[0], 0x11, "stored state: version 1, draining");
  for (const vm of vms) t.is(vm.responseHeader(exchange(vm), "connection"), "close");
});
