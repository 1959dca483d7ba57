// The wasm filter's failure_policy in a real Envoy: a VM that traps in a request or response callback, under
// FAIL_OPEN (shipped), FAIL_CLOSED and FAIL_RELOAD — what happens to the requests, measured.
import test, { type ExecutionContext } from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILT_WASM_PATH } from "../../extproc/envoy-run/launch.js";
import { startEnvoyStack, type EnvoyStack } from "../helpers/envoy-stack.js";
import { promSamples } from "../helpers/prometheus-text.js";
import { trappingModule, type TrapIn } from "../helpers/trapping-wasm.js";

type Policy = "FAIL_OPEN" | "FAIL_CLOSED" | "FAIL_RELOAD";

interface Observed {
  statuses: number[];
  served: number;
  vmReloads: number;
}

/** Runs `requests` requests one at a time, each on its own connection, through a stack whose VM traps. */
async function observe(t: ExecutionContext, policy: Policy, trapIn: TrapIn, requests = 6): Promise<Observed | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "meshext-trap-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const wasm = join(dir, `trap-${trapIn}.wasm`);
  writeFileSync(wasm, trappingModule(trapIn));
  const stack: EnvoyStack | undefined = await startEnvoyStack(t, {
    editYaml: (yaml) => {
      const edited = yaml.replace("failure_policy: FAIL_OPEN", `failure_policy: ${policy}`).replace(BUILT_WASM_PATH, wasm);
      if (edited === yaml || !edited.includes(wasm)) throw new Error("the generated bootstrap no longer has the wasm filter's failure_policy / filename as expected");
      return edited;
    },
  });
  if (!stack) return undefined;
  const statuses: number[] = [];
  for (let i = 0; i < requests; i++) {
    const res = await fetch(`${stack.inboundUrl}/r${i}`, { headers: { connection: "close" } });
    await res.text();
    statuses.push(res.status);
  }
  const prom = promSamples(await stack.envoy.prometheus());
  return { statuses, served: stack.app.served, vmReloads: prom.get("envoy_wasm_meshext_drain_vm_reload") ?? -1 };
}

test("real envoy › wasm failure_policy: FAIL_OPEN (shipped) fails the request that trapped, then lets every request pass unfiltered", async (t) => {
  // Given the shipped FAIL_OPEN and a VM that traps in on_request_headers
  const seen = await observe(t, "FAIL_OPEN", "request_headers");
  if (!seen) return;
  // Then the request during which it trapped gets Envoy's 503, and the rest reach the app without the filter
  t.deepEqual(seen.statuses, [503, 200, 200, 200, 200, 200]);
  t.is(seen.served, 5);
  t.is(seen.vmReloads, 0);
});

test("real envoy › wasm failure_policy: FAIL_OPEN with a trap in on_response_headers: that response is lost (503), the rest pass", async (t) => {
  // Given FAIL_OPEN and a VM that traps on the response
  const seen = await observe(t, "FAIL_OPEN", "response_headers");
  if (!seen) return;
  // Then the app served every request, but the first client got 503 in place of the app's answer
  t.deepEqual(seen.statuses, [503, 200, 200, 200, 200, 200]);
  t.is(seen.served, 6);
});

test("real envoy › wasm failure_policy: FAIL_CLOSED answers 503 to every request once the VM trapped, without forwarding", async (t) => {
  // Given FAIL_CLOSED and a VM that traps on the response
  const seen = await observe(t, "FAIL_CLOSED", "response_headers");
  if (!seen) return;
  // Then only the first request reached the app; from then on Envoy answers 503 itself
  t.deepEqual(seen.statuses, [503, 503, 503, 503, 503, 503]);
  t.is(seen.served, 1);
});

test("real envoy › wasm failure_policy: FAIL_RELOAD with a VM that always traps fails every request: between reloads (backoff) and at each reloaded VM's trap", async (t) => {
  // Given FAIL_RELOAD and a VM that traps in on_request_headers
  const seen = await observe(t, "FAIL_RELOAD", "request_headers");
  if (!seen) return;
  // Then every request is answered 503 and none reaches the app: a bug that traps every time is FAIL_CLOSED plus reload churn
  t.deepEqual(seen.statuses, [503, 503, 503, 503, 503, 503]);
  t.is(seen.served, 0);
});
