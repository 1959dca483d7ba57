// Who am I: the local dataplane (mesh, proxy type, inbounds with tags) from a Kuma Dataplane resource
// (universal YAML) or from `--mesh` + `--dataplane-tags k=v,…`. Returns violations instead of throwing.
import { at, Issues, isObj } from "./issues.js";
import { parseDocuments } from "./parse.js";
import { INBOUND_STATES, SERVICE_TAG, type Dataplane, type Inbound } from "../model/dataplane.js";
import type { ProxyType, Violation } from "../model/types.js";
import { versionTraits, type KumaVersion } from "../model/kuma-version.js";

export { LABEL, SERVICE_TAG, type Dataplane, type Inbound } from "../model/dataplane.js";

export interface DataplaneResult {
  dataplane?: Dataplane;
  violations: Violation[];
}

/** Reads a Dataplane from a YAML/JSON text holding one `type: Dataplane` document. */
export function dataplaneFromText(text: string, kumaVersion?: KumaVersion): DataplaneResult {
  const docs = parseDocuments(text);
  for (const d of docs) if (d.violations) return { violations: d.violations };
  const doc = docs.find((d) => isObj(d.value) && d.value.type === "Dataplane");
  if (!doc) return { violations: [{ field: "type", message: "no document with type: Dataplane" }] };
  return dataplaneFromObject(doc.value, kumaVersion);
}

/** `kumaVersion` 3.0: inbounds need no tags (Kuma 3.0 removed them; Dataplane `labels` are what policies select). */
export function dataplaneFromObject(doc: unknown, kumaVersion?: KumaVersion): DataplaneResult {
  const tagsRequired = versionTraits(kumaVersion).inboundTagsRequired;
  const issues = new Issues();
  const o = issues.obj(doc, "document");
  if (!o) return { violations: issues.list };
  if (o.type !== "Dataplane") issues.add("type", "must be Dataplane");
  const mesh = issues.str(o.mesh, "mesh", false) ?? "default";
  const name = issues.str(o.name, "name") ?? "";
  const labels = issues.stringMap(o.labels, "labels", false);
  const net = issues.obj(o.networking, "networking");
  const inbounds: Inbound[] = [];
  let proxyType: ProxyType = "Sidecar";
  if (net && net.gateway !== undefined) {
    const gw = issues.obj(net.gateway, "networking.gateway");
    proxyType = gw?.type === "BUILTIN" ? "Gateway" : "Sidecar";
    const tags = issues.stringMap(gw?.tags, "networking.gateway.tags", true, true);
    if (tags) inbounds.push({ name: "gateway", tags: { ...tags } });
    if (tags && !tags[SERVICE_TAG]) issues.add(at("networking.gateway.tags", SERVICE_TAG), "must be defined");
  } else if (net) {
    const list = issues.arr(net.inbound, "networking.inbound", true, 1) ?? [];
    list.forEach((raw, i) => {
      const p = at("networking.inbound", i);
      const ib = issues.obj(raw, p);
      if (!ib) return;
      const tags = issues.stringMap(ib.tags, at(p, "tags"), tagsRequired, tagsRequired);
      if (tagsRequired && tags && !tags[SERVICE_TAG]) issues.add(at(at(p, "tags"), SERVICE_TAG), "must be defined");
      const port = issues.int(ib.port, at(p, "port"), 1, 65535, false);
      const ibName = typeof ib.name === "string" ? ib.name : port !== undefined ? String(port) : `inbound[${i}]`;
      const declared = typeof ib.name === "string" ? { declaredName: ib.name } : {};
      issues.oneOf(ib.state, at(p, "state"), INBOUND_STATES, false);
      const ignored = ib.state === "Ignored" ? { ignored: true as const } : {};
      inbounds.push({ name: ibName, ...declared, ...(port !== undefined ? { port } : {}), tags: { ...(tags ?? {}) }, ...ignored });
    });
  }
  if (issues.list.length > 0) return { violations: issues.list };
  const dataplane: Dataplane = { mesh, name, proxyType, inbounds };
  if (labels) dataplane.labels = { ...labels };
  return { dataplane, violations: [] };
}

/** `--dataplane-tags kuma.io/service=backend,version=v1` (kuma.io/service required) → one inbound. */
export function dataplaneFromTags(mesh: string, tagsFlag: string, name = "dataplane"): DataplaneResult {
  const issues = new Issues();
  const tags: Record<string, string> = {};
  for (const part of tagsFlag.split(",").map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0 || eq === part.length - 1) issues.add("dataplane-tags", `"${part}" is not key=value`);
    else tags[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  if (!tags[SERVICE_TAG]) issues.add("dataplane-tags", `${SERVICE_TAG} is required`);
  if (!mesh) issues.add("mesh", "must not be empty");
  if (issues.list.length > 0) return { violations: issues.list };
  return { dataplane: { mesh, name, proxyType: "Sidecar", inbounds: [{ name: "inbound[0]", tags }] }, violations: [] };
}
