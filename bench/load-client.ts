// Child-process wrapper around runLoad (bench/envoy-load.ts) so the grpc-js load generator runs pinned on
// its own core: node dist/bench/load-client.js '<json LoadOptions minus callbacks> + {"samples":bool}';
// prints one JSON line {ok, failed, errors, elapsedMs, latenciesMs, samples?: [startMs, latencyMs, failed?][]}.
import { runLoad, type LoadOptions } from "./envoy-load.js";

const opts = JSON.parse(process.argv[2] ?? "{}") as LoadOptions & { samples?: boolean };
const samples: Array<[number, number, number]> = [];
if (opts.samples) opts.onRequest = (startMs, latencyMs, err) => samples.push([Math.round(startMs * 10) / 10, Math.round(latencyMs * 1000) / 1000, err ? 1 : 0]);
const r = await runLoad(opts);
// With samples the latencies are in them; the write to the pipe must finish before exiting.
const latenciesMs = opts.samples ? [] : r.latenciesMs.map((x) => Math.round(x * 1000) / 1000);
process.stdout.write(JSON.stringify({ ...r, latenciesMs, ...(opts.samples ? { samples } : {}) }) + "\n", () => process.exit(0));
