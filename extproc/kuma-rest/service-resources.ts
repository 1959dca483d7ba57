// Validation of the destination resources `to[].targetRef` names — MeshService, MeshExternalService,
// MeshMultiZoneService — in Kuma 2.14's universal shape, with Kuma's field paths (each type's
// `api/v1alpha1/validator.go` and struct tags @v2.14.3). Pure: shared by the control plane's PUT and the
// sidecar's fetch, so neither accepts what the other refuses.
import { at, isObj, Issues, type Obj } from "../policy/documents/issues.js";
import type { Violation } from "../policy/model/types.js";

/** Kuma's `SupportedProtocols` (pkg/core/metadata/protocol.go). */
const APP_PROTOCOLS = ["grpc", "http", "http2", "kafka", "tcp"] as const;
/** MeshExternalService `match.protocol` (its validator's `allMatchProtocols`). */
const MATCH_PROTOCOLS = ["tcp", "grpc", "http", "http2"] as const;
const VERIFICATION_MODES = ["SkipSAN", "SkipCA", "SkipAll", "Secured"] as const;
/** Kuma 2.14 caps these display names at 63 characters (a DNS label: they become hostnames). */
const MAX_SERVICE_NAME = 63;

const DNS_NAME = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const isIp = (s: string) => IPV4.test(s) || (s.includes(":") && /^[0-9A-Fa-f:.]+$/.test(s));

/** Every violation of a service resource's `spec` (paths start at `spec`); empty means valid. */
export function serviceResourceViolations(kind: string, doc: Obj): Violation[] {
  const issues = new Issues();
  const name = typeof doc.labels === "object" && isObj(doc.labels) && typeof doc.labels["kuma.io/display-name"] === "string" ? doc.labels["kuma.io/display-name"] : doc.name;
  if (typeof name === "string" && name.length > MAX_SERVICE_NAME) issues.add("name", `value length must less or equal ${MAX_SERVICE_NAME}`);
  const spec = issues.obj(doc.spec, "spec");
  if (!spec) return issues.list;
  if (kind === "MeshService") meshService(issues, spec);
  else if (kind === "MeshExternalService") meshExternalService(issues, spec);
  else if (kind === "MeshMultiZoneService") meshMultiZoneService(issues, spec);
  else issues.add("type", `${kind} is not a service resource`);
  return issues.list;
}

function meshService(issues: Issues, spec: Obj): void {
  issues.oneOf(spec.state, "spec.state", ["Available", "Unavailable"] as const, false);
  const selector = issues.obj(spec.selector, "spec.selector", false);
  if (selector) {
    const set = ["dataplaneTags", "dataplaneRef", "dataplaneLabels"].filter((k) => selector[k] !== undefined);
    if (set.length > 1) issues.add("spec.selector", "must specify only one of: dataplaneTags, dataplaneRef, or dataplaneLabels");
    issues.stringMap(selector.dataplaneTags, "spec.selector.dataplaneTags", false);
    const ref = issues.obj(selector.dataplaneRef, "spec.selector.dataplaneRef", false);
    if (ref) issues.str(ref.name, "spec.selector.dataplaneRef.name", false);
    const labels = issues.obj(selector.dataplaneLabels, "spec.selector.dataplaneLabels", false);
    if (labels) issues.stringMap(labels.matchLabels, "spec.selector.dataplaneLabels.matchLabels", false);
  }
  (issues.arr(spec.ports, "spec.ports", false) ?? []).forEach((p, i) => {
    const path = at("spec.ports", i);
    const port = issues.obj(p, path);
    if (!port) return;
    issues.int(port.port, at(path, "port"), 1, 65535);
    if (port.name !== undefined) issues.str(port.name, at(path, "name"));
    const target = port.targetPort;
    if (target !== undefined && typeof target !== "string") issues.int(target, at(path, "targetPort"), 1, 65535);
    issues.oneOf(port.appProtocol, at(path, "appProtocol"), APP_PROTOCOLS, false);
  });
  (issues.arr(spec.identities, "spec.identities", false) ?? []).forEach((id, i) => {
    const path = at("spec.identities", i);
    const o = issues.obj(id, path);
    if (!o) return;
    issues.oneOf(o.type, at(path, "type"), ["ServiceTag", "SpiffeID"] as const);
    issues.str(o.value, at(path, "value"));
  });
}

function meshExternalService(issues: Issues, spec: Obj): void {
  const match = issues.obj(spec.match, "spec.match");
  if (match) {
    if (match.type !== undefined && match.type !== "" && match.type !== "HostnameGenerator") {
      issues.add("spec.match.type", `unrecognized type '${String(match.type)}' - only 'HostnameGenerator' is supported`);
    }
    if (!Number.isInteger(match.port) || (match.port as number) < 1 || (match.port as number) > 65535) issues.add("spec.match.port", "port must be a valid (1-65535)");
    if (!(MATCH_PROTOCOLS as readonly unknown[]).includes(match.protocol)) issues.add("spec.match.protocol", `"protocol" must be one of ["${MATCH_PROTOCOLS.join('", "')}"]`);
  }
  const extension = issues.obj(spec.extension, "spec.extension", false);
  if (extension && (typeof extension.type !== "string" || extension.type === "")) issues.add("spec.extension.type", "must not be empty");
  if (extension) return; // Kuma leaves endpoints and tls to the extension
  (issues.arr(spec.endpoints, "spec.endpoints", false) ?? []).forEach((e, i) => {
    const path = at("spec.endpoints", i);
    const ep = issues.obj(e, path);
    if (!ep) return;
    const address = typeof ep.address === "string" ? ep.address : "";
    if (!isIp(address) && !DNS_NAME.test(address)) issues.add(at(path, "address"), "address has to be a valid IP or hostname");
    else if (!Number.isInteger(ep.port) || (ep.port as number) < 1 || (ep.port as number) > 65535) issues.add(at(path, "port"), "port must be a valid (1-65535)");
  });
  const tls = issues.obj(spec.tls, "spec.tls", false);
  const verification = tls ? issues.obj(tls.verification, "spec.tls.verification", false) : undefined;
  if (verification) {
    const path = "spec.tls.verification";
    if (verification.serverName !== undefined && (typeof verification.serverName !== "string" || !DNS_NAME.test(verification.serverName))) {
      issues.add(at(path, "serverName"), "must be a valid DNS name");
    }
    if (verification.mode !== undefined && verification.mode !== "") issues.oneOf(verification.mode, at(path, "mode"), VERIFICATION_MODES);
    (issues.arr(verification.subjectAltNames, at(path, "subjectAltNames"), false) ?? []).forEach((s, i) => {
      const san = issues.obj(s, at(at(path, "subjectAltNames"), i));
      if (san) issues.oneOf(san.type, at(at(at(path, "subjectAltNames"), i), "type"), ["Prefix", "Exact"] as const);
    });
    if (verification.clientCert !== undefined && verification.clientKey === undefined) issues.add(at(path, "clientKey"), "must be defined when clientCert is defined");
    if (verification.clientCert === undefined && verification.clientKey !== undefined) issues.add(at(path, "clientCert"), "must be defined when clientKey is defined");
  }
}

function meshMultiZoneService(issues: Issues, spec: Obj): void {
  const selector = isObj(spec.selector) ? spec.selector : {};
  const meshService = isObj(selector.meshService) ? selector.meshService : {};
  const labels = isObj(meshService.matchLabels) ? meshService.matchLabels : {};
  if (Object.keys(labels).length === 0) issues.add("spec.selector.meshService.matchLabels", "cannot be empty");
  else issues.stringMap(labels, "spec.selector.meshService.matchLabels", true);
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  if (ports.length === 0) issues.add("spec.ports", "cannot be empty");
  ports.forEach((p, i) => {
    const path = at("spec.ports", i);
    const port = issues.obj(p, path);
    if (!port) return;
    issues.int(port.port, at(path, "port"), 1, 65535);
    if (port.name !== undefined && (typeof port.name !== "string" || port.name === "")) issues.add(at(path, "name"), "must not be empty");
    if (!(APP_PROTOCOLS as readonly unknown[]).includes(port.appProtocol)) issues.add(at(path, "appProtocol"), `must be one of ${APP_PROTOCOLS.join(", ")}`);
  });
}
