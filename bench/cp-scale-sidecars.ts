// A child process of bench/control-plane-scale.ts playing `sidecars` simulated sidecars: each holds one
// long-poll per policy kind (If-None-Match + ?wait=, re-armed at the ETag it was answered, as
// extproc/policy-source/http-source.ts does) and reads every woken page in full. Nothing else runs here.
import { Agent } from "node:http";
import { pathToFileURL } from "node:url";
import { POLICY_TYPES } from "../extproc/kuma-rest/resources.js";
import { type ChildArgs, type FromChild, LONG_POLL_WAIT, send, type ToChild } from "./cp-scale-http.js";
import { sleep } from "./proc.js";

async function main(args: ChildArgs): Promise<void> {
  const base = new URL(args.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const tell = (m: FromChild) => process.send!(m);
  let stopping = false;
  let sent = 0;
  let answers = 0;
  let errors = 0;
  const etags = new Map<string, string>();
  for (const t of POLICY_TYPES) etags.set(t.plural, (await send(agent, base, "GET", `/meshes/default/${t.plural}?size=${args.pageSize}`)).etag ?? "");
  const polls: Promise<void>[] = [];
  for (let s = 0; s < args.sidecars; s++) {
    for (const t of POLICY_TYPES) {
      polls.push(
        (async () => {
          let etag = etags.get(t.plural)!;
          while (!stopping) {
            const r = await send(agent, base, "GET", `/meshes/default/${t.plural}?size=${args.pageSize}&wait=${LONG_POLL_WAIT}`, { "if-none-match": etag }, undefined, () => sent++).catch((err: NodeJS.ErrnoException) => {
              if (!stopping) errors++;
              if (!stopping && process.env.MESHEXT_BENCH_DEBUG) process.stderr.write(`[sidecars] ${err.code ?? err.message}\n`);
              return undefined;
            });
            if (r?.etag) etag = r.etag;
            if (r && !stopping) answers++;
            if (!r) await sleep(100);
          }
        })(),
      );
    }
  }
  const progress = setInterval(() => tell({ type: "armed", sent }), 200);
  process.on("message", (m: ToChild) => {
    if (m.type === "measure") {
      answers = 0; // errors count over the whole run
    } else if (m.type === "report") {
      tell({ type: "result", longPollAnswers: answers, errors });
    } else if (m.type === "quit") {
      stopping = true;
      clearInterval(progress);
      agent.destroy();
      process.exit(0);
    }
  });
  tell({ type: "ready" });
}

if (process.send && import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main(JSON.parse(process.argv[2]!) as ChildArgs);
