// The pod's traffic redirection, as `meshext redirect` (the injected init container) installs it: TCP from
// outside the pod to the app's port goes to Envoy's inbound listener instead; nothing else is touched
// (the probe, admin and stats ports, loopback, and outbound traffic, which the bootstrap has no
// transparent listener for, go where they were sent). Pure: iptables-restore text and commands.

/** Our own nat chain: PREROUTING jumps to it, re-running the init container replaces its rules. */
export const INBOUND_CHAIN = "MESHEXT_INBOUND";

export interface RedirectPlan {
  /** The app's port whose inbound traffic goes through Envoy. */
  appPort: number;
  /** Envoy's inbound listener port. */
  redirectPort: number;
}

/** iptables-restore --noflush input: declares (and so empties) our chain, then fills it. */
export function inboundRules(p: RedirectPlan): string {
  return [
    "*nat",
    `:${INBOUND_CHAIN} - [0:0]`,
    `-A ${INBOUND_CHAIN} -p tcp -m tcp --dport ${p.appPort} -j REDIRECT --to-ports ${p.redirectPort}`,
    "COMMIT",
    "",
  ].join("\n");
}

/** The PREROUTING rule that sends traffic from outside the pod to our chain (added once: checked with -C first). */
export const PREROUTING_JUMP = ["-t", "nat", "PREROUTING", "-p", "tcp", "-j", INBOUND_CHAIN] as const;

/** iptables argv to check (-C) or add (-A) the PREROUTING jump. */
export function jumpArgs(action: "-C" | "-A"): string[] {
  const [t, table, chain, ...rest] = PREROUTING_JUMP;
  return [t, table, action, chain, ...rest];
}
