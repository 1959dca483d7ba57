// `meshext inject`: reads a workload (stdin or -f), adds the sidecar containers with their
// ContainerPatches, writes it to stdout. Refused injection: nothing on stdout, one error line, exit 1.
import { readFile } from "node:fs/promises";
import { formatHelp } from "../config/flags.js";
import { formatFailure } from "../inject/failure.js";
import { injectText } from "../inject/injector.js";
import { type ContainerPatchSource, PatchSourceError, patchSourceFor } from "../inject/patch-source.js";
import { renderSidecars } from "../inject/render.js";
import { INJECT_ENV_PREFIX, INJECT_FLAGS, loadInjectSettings } from "../inject/settings.js";

const USAGE = "meshext inject [-f FILE] [--patches DIR | --control-plane URL] [flags]";
const SUMMARY =
  "Adds the sidecar (meshext running Envoy) and the traffic-redirect init container to a Pod, Deployment,\n" +
  "StatefulSet, DaemonSet, ReplicaSet, Job or CronJob, rewrites the app's probes to the sidecar's probe port and\n" +
  "applies the ContainerPatches named by the kuma.io/container-patches annotation (or --default-patches).\n" +
  "Opted-out and hostNetwork workloads pass through unchanged; any patch problem refuses the injection.";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}


export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { settings, parsed } = loadInjectSettings(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(USAGE, SUMMARY, INJECT_FLAGS, INJECT_ENV_PREFIX));
    return 0;
  }
  let text: string;
  let source: ContainerPatchSource;
  try {
    text = settings.file && settings.file !== "-" ? await readFile(settings.file, "utf8") : await readStdin();
    source = await patchSourceFor(settings);
  } catch (err) {
    const message = err instanceof PatchSourceError ? err.message : `cannot read ${settings.file || "stdin"}: ${(err as Error).message}`;
    process.stderr.write(`meshext inject: ${message}\n`);
    return 1;
  }
  const outcome = await injectText(text, renderSidecars(settings), settings.defaultPatches, source);
  if (!outcome.ok) {
    process.stderr.write(`meshext inject: ${formatFailure(outcome.failure)}\n`);
    return 1;
  }
  for (const { workload, reason } of outcome.skipped) process.stderr.write(`meshext inject: not injecting ${workload}: opted out (${reason}); written unchanged\n`);
  if (outcome.injected.length === 0 && outcome.skipped.length === 0) process.stderr.write("meshext inject: no workload found in the input; written unchanged\n");
  process.stdout.write(outcome.output);
  return 0;
}
