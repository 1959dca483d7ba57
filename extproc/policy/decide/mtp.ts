// MeshTrafficPermission on one inbound: whether it applies at all (mesh mTLS state and MeshIdentity, as
// meshtrafficpermission/plugin/v1alpha1/plugin.go at v2.14.3 decides; a peer of a trust domain no MeshTrust
// gives fails Kuma's TLS handshake before any policy; on Kuma's master branch, 3.0, only a MeshIdentity gives
// mTLS: a proxy without a workload identity skips MTP),
// the 2.14 rules path (every allow/deny list of every selected policy pooled: any deny wins, then any allow,
// else deny; 2.12–2.13: first matching rule in order) and the legacy `from` path (RBAC "any allow").
import type { Explanation } from "../../decision.js";
import type { InboundPlan } from "../plans/compile.js";
import { decidingItem, matchFrom, type FromMatch } from "../plans/from-items.js";
import type { ClientFacts } from "../model/client.js";
import { candidateRules, matchHolds, perClient, type InboundRuleEntry, type RulesPlan } from "../plans/inbound-rules.js";
import type { VersionTraits } from "../model/kuma-version.js";
import type { Who } from "./outcomes.js";
import type { RuleMatch } from "../model/types.js";

export interface MtpOutcome {
  /** deny → 403; allow / shadow-deny → continue. */
  explain: Explanation;
  denied: boolean;
  /** Legacy path: the rule regions the client fell in. */
  matches?: FromMatch[];
  /** Rules path: the list entry that decided. */
  hit?: MtpHit;
  outcome: string;
}

export interface MtpHit {
  entry: InboundRuleEntry;
  list: MtpList;
  index: number;
}

type MtpList = "deny" | "allow" | "allowWithShadowDeny";
const ALLOWING = new Set(["Allow", "AllowWithShadowDeny"]);

export interface MtpEnv {
  traits: VersionTraits;
  /** Mesh resource's mTLS state; undefined = no Mesh resource known (MTP applies, "no MTP" allows). */
  mtls?: boolean;
  /** Name of the proxy's MeshIdentity, if it has one (2.12+): its mTLS is then on. */
  identity?: string;
  /** Peer trust domains the mesh's MeshTrusts accept for this proxy; undefined: not restricted. */
  trustDomains?: ReadonlySet<string>;
}

/** The trust domain of a `spiffe://` ID (the first of a joined list), else undefined. */
export function trustDomainOf(spiffe: string | undefined): string | undefined {
  return spiffe ? /^spiffe:\/\/([^/,]+)/.exec(spiffe)?.[1] : undefined;
}

/** undefined: no MTP selects the inbound and the mesh's state says everything is allowed. */
export function decideMtp(plan: InboundPlan, client: ClientFacts, who: Who, env: MtpEnv): MtpOutcome | undefined {
  const name = plan.inbound.name;
  if (env.traits.mtlsFrom === "mesh-identity" && env.identity === undefined) {
    // Kuma 3.0: only a MeshIdentity gives a proxy mTLS; without one it serves plaintext and MTP is skipped.
    if (!plan.rules.MeshTrafficPermission) return undefined;
    return allowed(`the proxy has no MeshIdentity (no mTLS in Kuma 3.0): MeshTrafficPermission does not apply on inbound ${name}`, "not applied (no MeshIdentity)");
  }
  const peerDomain = env.trustDomains ? trustDomainOf(client.spiffe) : undefined;
  if (peerDomain !== undefined && !env.trustDomains!.has(peerDomain)) {
    const reason = `${who()}: trust domain ${peerDomain} is not one of the MeshTrusts' (${[...env.trustDomains!].sort().join(", ")}): Kuma's TLS handshake refuses the peer before MeshTrafficPermission`;
    return { explain: { action: "deny", kind: "none", reason }, denied: true, outcome: "deny (untrusted trust domain)" };
  }
  const identityPath = env.identity !== undefined && env.traits.mtpIdentityRulesPath;
  // From 2.12 a workload identity turns the proxy's mTLS on whatever the Mesh says (plugin.go skips MTP only
  // when the Mesh has mTLS off and the proxy has no identity).
  const mtls = env.identity !== undefined ? true : env.mtls;
  if (mtls === false && !identityPath) {
    if (!plan.rules.MeshTrafficPermission && !plan.from.MeshTrafficPermission) return undefined;
    return allowed(`mesh mTLS is off: MeshTrafficPermission does not apply on inbound ${name}`, "not applied (mTLS off)");
  }
  const rules = plan.rules.MeshTrafficPermission;
  if (rules) {
    // The whole outcome (with its reason text) is kept per client: the rules path builds no strings per request.
    return perClient(rules, client, () => {
      const hit = env.traits.mtpRules === "pooled" ? pooledHit(rules, client) : perRuleHit(rules, client);
      return hit ? fromHit(hit, who()) : noHit(rules, who());
    });
  }
  if (identityPath) {
    const explain: Explanation = { action: "deny", kind: "MeshTrafficPermission", reason: `${who()}: the proxy has MeshIdentity ${env.identity} and no MeshTrafficPermission rules select inbound ${name} (deny all${env.traits.fromRemoved.has("MeshTrafficPermission") ? "" : "; from-based MTPs are ignored"})` };
    return { explain, denied: true, outcome: "deny (MeshIdentity without MTP rules)" };
  }
  const from = plan.from.MeshTrafficPermission;
  if (from) return legacy(from, client, who(), name);
  if (mtls === true) {
    const why = env.mtls === true ? "mesh mTLS is on" : `the proxy has MeshIdentity ${env.identity} (mTLS on)`;
    const explain: Explanation = { action: "deny", kind: "MeshTrafficPermission", reason: `${who()}: ${why} and no MeshTrafficPermission selects inbound ${name} (deny all)` };
    return { explain, denied: true, outcome: "deny (no MeshTrafficPermission under mTLS)" };
  }
  return undefined;
}

function allowed(reason: string, outcome: string): MtpOutcome {
  return { explain: { action: "allow", kind: "none", reason }, denied: false, outcome };
}

/** v2.14.0: any deny of any rule, then any allow / allowWithShadowDeny, else none (deny). */
function pooledHit(plan: RulesPlan, client: ClientFacts): MtpHit | undefined {
  const rules = candidateRules(plan, client);
  return firstHit(rules, client, ["deny"]) ?? firstHit(rules, client, ["allowWithShadowDeny"]) ?? firstHit(rules, client, ["allow"]);
}

/** 2.12–2.13: rules in ascending policy priority, each its deny list then its allow lists; the first match decides. */
function perRuleHit(plan: RulesPlan, client: ClientFacts): MtpHit | undefined {
  for (const entry of candidateRules(plan, client)) {
    const hit = firstHit([entry], client, ["deny"]) ?? firstHit([entry], client, ["allow", "allowWithShadowDeny"]);
    if (hit) return hit;
  }
  return undefined;
}

function firstHit(entries: readonly InboundRuleEntry[], client: ClientFacts, lists: readonly MtpList[]): MtpHit | undefined {
  for (const entry of entries) {
    for (const list of lists) {
      const items = (entry.conf[list] as RuleMatch[] | undefined) ?? [];
      const index = items.findIndex((m) => matchHolds(m, client));
      if (index >= 0) return { entry, list, index };
    }
  }
  return undefined;
}

function fromHit(hit: MtpHit, describe: string): MtpOutcome {
  const rule = `${hit.entry.rule}.default.${hit.list}[${hit.index}]`;
  const action = hit.list === "deny" ? "deny" : hit.list === "allow" ? "allow" : "shadow-deny";
  const what = hit.list === "allowWithShadowDeny" ? "allowWithShadowDeny (allowed, would be denied)" : hit.list;
  const explain: Explanation = { action, kind: "MeshTrafficPermission", policy: hit.entry.policy.name, rule, reason: `${describe}: ${what} by ${hit.entry.policy.name} ${rule}` };
  return { explain, denied: action === "deny", hit, outcome: action };
}

function noHit(plan: RulesPlan, describe: string): MtpOutcome {
  const top = plan.policies[plan.policies.length - 1]!;
  const explain: Explanation = { action: "deny", kind: "MeshTrafficPermission", policy: top.name, reason: `${describe}: no allow entry of the MeshTrafficPermission rules matches (default deny)` };
  return { explain, denied: true, outcome: "deny (default)" };
}

function legacy(mtp: NonNullable<InboundPlan["from"]["MeshTrafficPermission"]>, client: ClientFacts, describe: string, inbound: string): MtpOutcome {
  const matches = matchFrom(mtp, client.tags);
  const allowing = matches.filter((m) => ALLOWING.has(String(m.conf.action)));
  if (allowing.length === 0) {
    const item = matches[0] ? decidingItem(matches[0], "action") : undefined;
    const top = mtp.policies[mtp.policies.length - 1]!;
    const reason = item
      ? `${describe}: action ${String(matches[0]!.conf.action)} (last set by ${item.policy.type} ${item.policy.name} from[${item.index}])`
      : `${describe}: no from rule of the MeshTrafficPermissions selecting inbound ${inbound} matches`;
    const explain: Explanation = { action: "deny", kind: "MeshTrafficPermission", policy: (item?.policy ?? top).name, reason };
    if (item) explain.rule = `from[${item.index}]`;
    return { explain, denied: true, matches, outcome: "deny" };
  }
  const shadow = matches.find((m) => m.conf.action === "AllowWithShadowDeny");
  const decidedBy = decidingItem(shadow ?? allowing[0]!, "action")!;
  const explain: Explanation = {
    action: shadow ? "shadow-deny" : "allow",
    kind: "MeshTrafficPermission",
    policy: decidedBy.policy.name,
    rule: `from[${decidedBy.index}]`,
    reason: shadow ? `${describe}: AllowWithShadowDeny (allowed, would be denied)` : `${describe}: Allow`,
  };
  return { explain, denied: false, matches, outcome: explain.action };
}
