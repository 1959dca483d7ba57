// security-defaults › every default that decides who is trusted, what is exposed or how much a client
// may cost is pinned here, so flipping one in a flag table (or in the engine's own fallback) fails a test.
import test from "ava";
import { CONTROL_PLANE_FLAGS, loadControlPlaneConfig } from "../../extproc/config/control-plane.js";
import { ConfigError, type FlagSpec } from "../../extproc/config/flags.js";
import { loadSidecarConfig, SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";
import { startFromConfig } from "../../extproc/commands/control-plane.js";
import { INJECT_FLAGS, loadInjectSettings } from "../../extproc/inject/settings.js";
import { createLogger } from "../../extproc/log.js";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";

interface Pin {
  table: readonly FlagSpec[];
  tableName: string;
  key: string;
  value: string | number | boolean;
  why: string;
}

const sidecar = (key: string, value: Pin["value"], why: string): Pin => ({ table: SIDECAR_FLAGS, tableName: "sidecar", key, value, why });
const controlPlane = (key: string, value: Pin["value"], why: string): Pin => ({ table: CONTROL_PLANE_FLAGS, tableName: "control-plane", key, value, why });
const inject = (key: string, value: Pin["value"], why: string): Pin => ({ table: INJECT_FLAGS, tableName: "inject", key, value, why });

// Planted bug this catches: `default: true` for trust-kuma-tags-header in SIDECAR_FLAGS (a forgeable
// identity without mTLS); the row "sidecar --trust-kuma-tags-header" then fails. Each row below guards
// the same way against its own flip.
const PINS: Pin[] = [
  sidecar("trustKumaTagsHeader", false, "x-kuma-tags is forgeable without mTLS: identity comes from certificates only"),
  sidecar("beforeFirstSync", "deny", "fail closed until a policy set is in force"),
  sidecar("explainHeader", false, "denied clients are not told which policy denied them"),
  sidecar("grpcListen", "127.0.0.1:9001", "ext_proc only for the local Envoy"),
  sidecar("grpcSocket", "", "no extra listener unless asked"),
  sidecar("adminListen", "127.0.0.1:9902", "/drain and /explain only from the pod"),
  sidecar("controlPlaneToken", "", "no built-in secret"),
  sidecar("maxStreamsPerConnection", 0, "no connection rotation: through a real Envoy it fails streams and saves none"),
  sidecar("maxMessageTimeoutMs", 0, "Envoy may not extend a message timeout unless allowed"),
  sidecar("envoyAdmin", "", "no calls to an Envoy admin API unless named"),
  sidecar("decisionLogPush", false, "no decision record (paths, client identities) leaves the sidecar unless asked"),
  controlPlane("listen", "127.0.0.1:5681", "unauthenticated writes only from the host"),
  controlPlane("token", "", "no built-in secret; a non-loopback listener then refuses to start"),
  controlPlane("maxBodyBytes", 1 << 20, "bounded request bodies"),
  inject("proxyUid", 5678, "sidecars run as a non-root user"),
  inject("controlPlaneToken", "", "no built-in secret"),
];

for (const pin of PINS) {
  const flag = pin.table.find((s) => s.key === pin.key)?.flag ?? pin.key;
  test(`security-defaults › ${pin.tableName} --${flag} defaults to ${JSON.stringify(pin.value)} (${pin.why})`, (t) => {
    // given the flag table; when nothing sets the flag; then the default is the safe one
    const spec = pin.table.find((s) => s.key === pin.key);
    t.truthy(spec, `${pin.tableName} has no flag with key ${pin.key}`);
    t.is(spec!.default, pin.value);
  });
}

test("security-defaults › the resolved configs with nothing set carry the safe values", (t) => {
  // given no argv, no env, no config file; when each command resolves its flags; then the pins hold end to end
  const { config: sc } = loadSidecarConfig([], {});
  const { config: cp } = loadControlPlaneConfig([], {});
  const { settings: inj } = loadInjectSettings([], {});
  const resolved: Record<string, Record<string, unknown>> = { sidecar: sc, "control-plane": cp, inject: { ...inj } };
  for (const pin of PINS) t.is(resolved[pin.tableName]![pin.key], pin.value, `${pin.tableName} ${pin.key}`);
});

test("security-defaults › a control plane on a non-loopback address without a token refuses to start", async (t) => {
  // given the default (empty) token; when --listen is 0.0.0.0; then start fails naming --token
  const { config } = loadControlPlaneConfig(["--listen", "0.0.0.0:0", "--data-dir", "/nonexistent-meshext-cp"], {});
  const err = await t.throwsAsync(startFromConfig(config, createLogger("silent")), { instanceOf: ConfigError });
  t.regex(err!.message, /--token/);
});

test("security-defaults › inject refuses to run the sidecars as root", (t) => {
  t.throws(() => loadInjectSettings(["--proxy-uid", "0"], {}), { instanceOf: ConfigError, message: /--proxy-uid: must be at least 1/ });
});

const MTP_ALLOW_WEB = `
type: MeshTrafficPermission
mesh: default
name: allow-web
spec:
  targetRef: {kind: MeshService, name: backend}
  from:
    - targetRef: {kind: MeshService, name: web}
      default: {action: Allow}
`;

function inboundWithKumaTags(): RequestFacts {
  const headers = new Map([["x-kuma-tags", "&kuma.io/service=web&"]]);
  return { direction: "inbound", method: "GET", path: "/", authority: "backend:8080", scheme: "http", headers, peerUriSans: [] };
}

test("security-defaults › an engine built without options ignores x-kuma-tags and denies before the first sync", (t) => {
  // given a PolicyEngine constructed with no trust/beforeFirstSync options (its own fallbacks)
  const dataplane = dataplaneFromTags("default", "kuma.io/service=backend").dataplane!;
  const engine = new PolicyEngine({ dataplane, nowMs: () => 0 });
  // when a request arrives before any policy set; then 503
  const early = engine.decide(inboundWithKumaTags());
  t.is(early.type, "respond");
  t.is(early.type === "respond" ? early.status : 0, 503);
  // when web is allowed and a request claims to be web only through x-kuma-tags; then it is denied
  engine.replace(parsePolicyText(MTP_ALLOW_WEB).policies);
  const forged = engine.decide(inboundWithKumaTags());
  t.is(forged.explain.action, "deny");
  // and only an engine told to trust the header lets the same request in (the header does name web)
  const trusting = new PolicyEngine({ dataplane, nowMs: () => 0, trustKumaTagsHeader: true });
  trusting.replace(parsePolicyText(MTP_ALLOW_WEB).policies);
  t.is(trusting.decide(inboundWithKumaTags()).explain.action, "allow");
});
