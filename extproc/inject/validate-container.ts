// Checks that a (patched) container is still a valid Kubernetes container; returns every
// violation with its field path. Pure: imports only the shared JSON-object test.
import { isObject } from "./json.js";

export interface Violation {
  field: string;
  message: string;
}

const KNOWN_FIELDS = new Set([
  "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
  "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe",
  "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext",
  "stdin", "stdinOnce", "tty",
]);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?$/;
const PROTOCOLS = ["TCP", "UDP", "SCTP"];
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];
const SECURITY_BOOLS = ["privileged", "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation"];
const SECURITY_IDS = ["runAsUser", "runAsGroup"];

/** IANA_SVC_NAME: at most 15 lowercase alphanumerics or '-', at least one letter, no "--", no '-' at the ends. */
function isPortName(x: unknown): boolean {
  return typeof x === "string" && x.length <= 15 && DNS_LABEL.test(x) && /[a-z]/.test(x) && !x.includes("--");
}

function isPort(x: unknown): boolean {
  return Number.isInteger(x) && (x as number) >= 1 && (x as number) <= 65535;
}

function checkStringList(v: Violation[], field: string, x: unknown): void {
  if (!Array.isArray(x) || x.some((s) => typeof s !== "string")) v.push({ field, message: "must be a list of strings" });
}

function checkPorts(v: Violation[], ports: unknown): void {
  if (!Array.isArray(ports)) return void v.push({ field: "ports", message: "must be a list" });
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `ports[${i}]`;
    if (!isObject(p)) return void v.push({ field: at, message: "must be an object" });
    if (!isPort(p.containerPort)) v.push({ field: `${at}.containerPort`, message: "must be an integer from 1 to 65535" });
    if (p.hostPort !== undefined && !isPort(p.hostPort)) v.push({ field: `${at}.hostPort`, message: "must be an integer from 1 to 65535" });
    if (p.protocol !== undefined && !PROTOCOLS.includes(p.protocol as string)) {
      v.push({ field: `${at}.protocol`, message: `must be one of ${PROTOCOLS.join(", ")}` });
    }
    if (p.name !== undefined) {
      if (!isPortName(p.name)) {
        v.push({ field: `${at}.name`, message: "must be an IANA service name (at most 15 lowercase letters, digits, '-')" });
      } else if (names.has(p.name as string)) {
        v.push({ field: `${at}.name`, message: `duplicate port name "${p.name as string}"` });
      } else names.add(p.name as string);
    }
  });
}

function checkEnv(v: Violation[], env: unknown): void {
  if (!Array.isArray(env)) return void v.push({ field: "env", message: "must be a list" });
  env.forEach((e, i) => {
    const at = `env[${i}]`;
    if (!isObject(e)) return void v.push({ field: at, message: "must be an object" });
    if (typeof e.name !== "string" || e.name === "") v.push({ field: `${at}.name`, message: "must be a non-empty string" });
    if (e.value !== undefined && typeof e.value !== "string") v.push({ field: `${at}.value`, message: "must be a string" });
    if (e.value !== undefined && e.valueFrom !== undefined) v.push({ field: at, message: "value and valueFrom are exclusive" });
  });
}

function checkResources(v: Violation[], resources: unknown): void {
  if (!isObject(resources)) return void v.push({ field: "resources", message: "must be an object" });
  for (const kind of ["limits", "requests"]) {
    const list = resources[kind];
    if (list === undefined) continue;
    if (!isObject(list)) {
      v.push({ field: `resources.${kind}`, message: "must be a map of resource name to quantity" });
      continue;
    }
    for (const [name, q] of Object.entries(list)) {
      if (!(typeof q === "number" || (typeof q === "string" && QUANTITY.test(q)))) {
        v.push({ field: `resources.${kind}.${name}`, message: `must be a quantity such as 100m or 64Mi, got ${JSON.stringify(q)}` });
      }
    }
  }
}

function checkSecurityContext(v: Violation[], sc: unknown): void {
  if (!isObject(sc)) return void v.push({ field: "securityContext", message: "must be an object" });
  for (const key of SECURITY_BOOLS) {
    if (sc[key] !== undefined && typeof sc[key] !== "boolean") v.push({ field: `securityContext.${key}`, message: "must be true or false" });
  }
  for (const key of SECURITY_IDS) {
    const id = sc[key];
    if (id !== undefined && !(Number.isInteger(id) && (id as number) >= 0)) {
      v.push({ field: `securityContext.${key}`, message: "must be a non-negative integer" });
    }
  }
  if (sc.capabilities !== undefined) {
    if (!isObject(sc.capabilities)) v.push({ field: "securityContext.capabilities", message: "must be an object" });
    else for (const k of ["add", "drop"]) {
      if (sc.capabilities[k] !== undefined) checkStringList(v, `securityContext.capabilities.${k}`, sc.capabilities[k]);
    }
  }
}

/** Validates a container that must still be called `expectedName` (renaming breaks re-injection). */
export function validateContainer(c: unknown, expectedName: string): Violation[] {
  const v: Violation[] = [];
  if (!isObject(c)) return [{ field: "", message: "must be an object" }];
  for (const key of Object.keys(c)) if (!KNOWN_FIELDS.has(key)) v.push({ field: key, message: "unknown container field" });
  if (typeof c.name !== "string" || !DNS_LABEL.test(c.name) || c.name.length > 63) {
    v.push({ field: "name", message: "must be a DNS label (lowercase letters, digits, '-', at most 63)" });
  } else if (c.name !== expectedName) {
    v.push({ field: "name", message: `must stay "${expectedName}" (injection finds its containers by name)` });
  }
  if (typeof c.image !== "string" || c.image.trim() === "" || /\s/.test(c.image)) v.push({ field: "image", message: "must be a non-empty image reference" });
  for (const key of ["command", "args"]) if (c[key] !== undefined) checkStringList(v, key, c[key]);
  if (c.ports !== undefined) checkPorts(v, c.ports);
  if (c.env !== undefined) checkEnv(v, c.env);
  if (c.resources !== undefined) checkResources(v, c.resources);
  if (c.securityContext !== undefined) checkSecurityContext(v, c.securityContext);
  for (const key of ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"]) {
    if (c[key] !== undefined && !isObject(c[key])) v.push({ field: key, message: "must be an object" });
  }
  if (c.imagePullPolicy !== undefined && !PULL_POLICIES.includes(c.imagePullPolicy as string)) {
    v.push({ field: "imagePullPolicy", message: `must be one of ${PULL_POLICIES.join(", ")}` });
  }
  if (c.volumeMounts !== undefined) {
    if (!Array.isArray(c.volumeMounts)) v.push({ field: "volumeMounts", message: "must be a list" });
    else c.volumeMounts.forEach((m, i) => {
      if (!isObject(m) || typeof m.name !== "string" || typeof m.mountPath !== "string") {
        v.push({ field: `volumeMounts[${i}]`, message: "must have string name and mountPath" });
      }
    });
  }
  return v;
}
