// Shared steps of the tests that run a documented `meshext up` example as written (the README's 2.14 section, the
// Kuma 3.0 example page): the page's code blocks, its explain calls and their shown decisions, the addresses in
// up's banner, and the check that /explain and the real ext_proc stream both decide as the page says.
import type { ExecutionContext } from "ava";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { call, eventually } from "./helpers.js";

/** The page's code blocks of one language, in order. */
export function pageBlocks(page: string, lang: string): string[] {
  return [...page.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
}

export interface ExplainCall {
  body: Record<string, unknown>;
  /** The decision type the page shows ("continue", "respond") and its status, if any. */
  type: string;
  status?: number;
}

/** The `curl … /explain -d '…'` calls of a shell block, each with the `# {"decision"…}` line the page shows for it. */
export function explainCalls(sh: string): ExplainCall[] {
  const bodies = [...sh.matchAll(/-d '([^']+)'/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
  const shown = [...sh.matchAll(/# (\{"decision".*)/g)].map((m) => /"type":"(\w+)"(?:,"status":(\d+))?/.exec(m[1]!)!);
  return bodies.map((body, i) => ({ body, type: shown[i]?.[1] ?? "", ...(shown[i]?.[2] ? { status: Number(shown[i]![2]) } : {}) }));
}

/** The `# …` lines of a shell block after its command, read as the JSON the page shows. */
export function shownJson(sh: string): unknown {
  return JSON.parse(sh.split("\n").filter((l) => l.startsWith("# ")).map((l) => l.slice(2)).join("\n"));
}

/** The control plane, sidecar admin and ext_proc addresses `meshext up` prints in its banner. */
export function bannerAddresses(banner: string): { cpUrl: string; admin: string; grpc: string } {
  return {
    cpUrl: /control plane \(Kuma REST API\)\s+(http:\/\/\S+)/.exec(banner)![1]!,
    admin: /sidecar admin\s+(http:\/\/\S+)/.exec(banner)![1]!,
    grpc: /sidecar ext_proc \(gRPC\)\s+(\S+)/.exec(banner)![1]!,
  };
}

export type Explain = (body: unknown) => Promise<{ decision: { type: string; status?: number }; dataplaneRules: unknown }>;

export function explainAt(admin: string): Explain {
  return async (body) => (await (await fetch(`${admin}/explain`, { method: "POST", body: JSON.stringify(body) })).json()) as Awaited<ReturnType<Explain>>;
}

/**
 * Waits until `calls[readyAt]` decides as shown (the policies are in force), then checks that every call decides as
 * the page shows through /explain, and that each call with an XFCC gets the same answer through the ext_proc stream.
 */
export async function checkShownDecisions(t: ExecutionContext, admin: string, grpc: string, calls: ExplainCall[], readyAt: number): Promise<void> {
  const explain = explainAt(admin);
  t.true(await eventually(async () => (await explain(calls[readyAt]!.body)).decision.type === calls[readyAt]!.type, 20_000), "the page's policies are in force");
  for (const c of calls) {
    const got = await explain(c.body);
    t.is(got.decision.type, c.type, JSON.stringify(c.body));
    if (c.status !== undefined) t.is(got.decision.status, c.status);
  }
  const envoy = new EnvoyExtProcClient(grpc, { messageTimeoutMs: 3000 });
  try {
    for (const c of calls) {
      const xfcc = (c.body.headers as Record<string, string> | undefined)?.["x-forwarded-client-cert"];
      if (!xfcc) continue;
      const outcome = await envoy.request({ path: "/", headers: [["x-forwarded-client-cert", xfcc]] });
      t.is(outcome.status, c.type === "continue" ? 200 : c.status!, xfcc);
    }
  } finally {
    envoy.close();
  }
}

/** A MeshTrafficPermission denying web's SPIFFE ID on the dataplane `targetRef` names (the banner's example). */
export async function putDenyWeb(cpUrl: string, targetRef: Record<string, unknown>): Promise<number> {
  const denyWeb = {
    type: "MeshTrafficPermission",
    mesh: "default",
    name: "deny-web",
    spec: { targetRef, rules: [{ default: { deny: [{ spiffeID: { type: "Exact", value: "spiffe://default.z1.mesh.local/ns/shop/sa/web" } }] } }] },
  };
  return (await call(cpUrl, "PUT", "/meshes/default/meshtrafficpermissions/deny-web", denyWeb)).status;
}
