// `meshext redirect`: the injected init container. Installs the pod's inbound redirection (redirect/rules.ts)
// with iptables-restore, once per pod network namespace; --dry-run prints the rules instead.
import { spawnSync } from "node:child_process";
import { ConfigError, formatHelp, type FlagSpec, resolveFlags } from "../config/flags.js";
import { inboundRules, jumpArgs } from "../redirect/rules.js";

const USAGE = "meshext redirect --app-port PORT [--redirect-port 15006] [--dry-run]";
const SUMMARY =
  "Redirects TCP traffic from outside the pod to the app's port into Envoy's inbound listener (iptables nat, chain\n" +
  "MESHEXT_INBOUND). Needs NET_ADMIN; meshext inject runs it as the meshext-init container.";

export const REDIRECT_FLAGS = [
  { key: "appPort", flag: "app-port", type: "int", default: 0, min: 0, help: "The app's port whose inbound traffic goes through Envoy (0: none, nothing is installed)." },
  { key: "redirectPort", flag: "redirect-port", type: "int", default: 15006, min: 1, help: "Envoy's inbound listener port (meshext run --inbound-port)." },
  { key: "iptablesRestore", flag: "iptables-restore", type: "path", default: "iptables-restore", help: "The iptables-restore binary." },
  { key: "iptables", flag: "iptables", type: "path", default: "iptables", help: "The iptables binary." },
  { key: "dryRun", flag: "dry-run", type: "bool", default: false, help: "Print the rules instead of installing them." },
] as const satisfies readonly FlagSpec[];

function run(binary: string, args: string[], input?: string): { ok: boolean; message: string } {
  const r = spawnSync(binary, args, { input, encoding: "utf8" });
  if (r.error) return { ok: false, message: `${binary}: ${r.error.message}` };
  return { ok: r.status === 0, message: (r.stderr || r.stdout).trim() };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const parsed = resolveFlags(REDIRECT_FLAGS, argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(USAGE, SUMMARY, REDIRECT_FLAGS));
    return 0;
  }
  const v = parsed.values;
  const appPort = v.appPort as number;
  const redirectPort = v.redirectPort as number;
  if (appPort > 65535 || redirectPort > 65535) throw new ConfigError("--app-port and --redirect-port must be ports (1 to 65535)");
  if (appPort === redirectPort) throw new ConfigError("--app-port and --redirect-port must differ");
  if (appPort === 0) {
    process.stdout.write("meshext redirect: no app port: nothing to redirect\n");
    return 0;
  }
  const rules = inboundRules({ appPort, redirectPort });
  if (v.dryRun) {
    process.stdout.write(rules + `iptables ${jumpArgs("-A").join(" ")}\n`);
    return 0;
  }
  const restored = run(v.iptablesRestore as string, ["--noflush"], rules);
  if (!restored.ok) {
    process.stderr.write(`meshext redirect: iptables-restore failed: ${restored.message}\n`);
    return 1;
  }
  // Once per network namespace: a re-run (the pod's init containers run again) finds the jump in place.
  if (!run(v.iptables as string, jumpArgs("-C")).ok) {
    const added = run(v.iptables as string, jumpArgs("-A"));
    if (!added.ok) {
      process.stderr.write(`meshext redirect: iptables ${jumpArgs("-A").join(" ")} failed: ${added.message}\n`);
      return 1;
    }
  }
  process.stdout.write(`meshext redirect: inbound TCP to port ${appPort} goes to ${redirectPort}\n`);
  return 0;
}
