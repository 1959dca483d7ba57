#!/usr/bin/env node
// The `meshext` executable: picks a subcommand and runs it; each subcommand lives in commands/.
// Long-running commands run with the measured runtime settings (config/runtime.ts): when started without them, the
// process relaunches itself with them (relaunch.ts) unless MESHEXT_RUNTIME_SETTINGS=off or --no-runtime-settings.
import { ConfigError } from "./config/flags.js";
import { missingRuntimeSettings, NO_RUNTIME_SETTINGS_ARG, RUNTIME_SETTINGS_ENV } from "./config/runtime.js";
import { dieWithRelaunchParent, relaunchWith } from "./relaunch.js";
import { MESHEXT_VERSION } from "./version.js";

interface Command {
  summary: string;
  /** Runs until stopped: gets the runtime settings. */
  longRunning?: boolean;
  load: () => Promise<{ main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> }>;
}

const COMMANDS: Record<string, Command> = {
  up: { summary: "Start the embedded control plane with the sample policies and a sidecar pointed at it.", longRunning: true, load: () => import("./commands/up.js") },
  sidecar: { summary: "Run the ext_proc policy service and drain controller next to an Envoy.", longRunning: true, load: () => import("./commands/sidecar.js") },
  run: { summary: "Run the sidecar and start Envoy as its child, on a bootstrap generated from the flags and the Dataplane.", longRunning: true, load: () => import("./commands/run.js") },
  bootstrap: { summary: "Print the Envoy bootstrap `meshext run` generates for the same flags.", load: () => import("./commands/bootstrap.js") },
  "control-plane": { summary: "Run the embedded control plane (Kuma REST API for policies and dataplanes).", longRunning: true, load: () => import("./commands/control-plane.js") },
  drain: {
    summary: "Start the sidecar's drain from inside its pod (preStop hooks): waits until drained, or --forever returns at once.",
    load: async () => ({ main: (await import("./commands/admin-client.js")).drainMain }),
  },
  "wait-ready": {
    summary: "Wait until the sidecar and Envoy are ready (postStart hook, startupProbe).",
    load: async () => ({ main: (await import("./commands/admin-client.js")).waitReadyMain }),
  },
  inject: { summary: "Add the sidecar containers to a Kubernetes workload, applying ContainerPatches.", load: () => import("./commands/inject.js") },
  redirect: { summary: "Redirect the pod's inbound traffic for the app's port to Envoy (the injected init container; iptables).", load: () => import("./commands/redirect.js") },
  policy: { summary: "Check a policy change before it ships: lint, test cases, what-if replay of a decision log, apply (--dry-run).", load: () => import("./commands/policy.js") },
  get: { summary: "List policies or dataplanes from a control plane's REST API as a table, YAML or JSON (like kumactl get).", load: () => import("./commands/get.js") },
  inspect: { summary: "Show the rules a control plane computes for one dataplane (its _rules view) as a table.", load: () => import("./commands/inspect.js") },
  explain: { summary: "Ask a running sidecar how it decides a request described on the command line (POST /explain).", load: () => import("./commands/explain.js") },
  webhook: { summary: "Serve the mutating admission webhook (AdmissionReview v1 over TLS): the same injection as inject.", load: () => import("./commands/webhook.js") },
};

function usage(): string {
  const lines = ["Usage: meshext <command> [flags]", "", "Commands:"];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(14)} ${c.summary}`);
  lines.push("", "Run `meshext <command> --help` for the flags of a command, with their defaults; `meshext --version` for the release.");
  lines.push(`Long-running commands apply the runtime settings (MALLOC_ARENA_MAX=1, --max-semi-space-size=4, --expose-gc) themselves; ${NO_RUNTIME_SETTINGS_ARG} or ${RUNTIME_SETTINGS_ENV}=off runs as started.`);
  return lines.join("\n") + "\n";
}

async function main(args: string[]): Promise<number> {
  const optedOut = args.includes(NO_RUNTIME_SETTINGS_ARG);
  const argv = args.filter((a) => a !== NO_RUNTIME_SETTINGS_ARG);
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "version") {
    process.stdout.write(`meshext ${MESHEXT_VERSION} (Node.js ${process.version})\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`meshext: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const missing = command.longRunning && !optedOut ? missingRuntimeSettings(process.env, process.execArgv) : undefined;
  if (missing) return relaunchWith(missing, [process.argv[1]!, ...argv]);
  dieWithRelaunchParent();
  try {
    return await (await command.load()).main(rest, process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`meshext ${name}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`meshext: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
