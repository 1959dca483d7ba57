// MeshIdentity and MeshTrust validation, field by field: each invalid spec gives exactly Kuma's violations (field path
// and message, as meshidentity/api/v1alpha1/validator.go, meshtrust/api/v1alpha1/validator.go and the secure data
// source check in common/v1alpha1 word them at v2.14.3), and each valid one none.
import test from "ava";
import { meshIdentityViolations, meshTrustViolations } from "../../extproc/policy/documents/mesh-identity-validate.js";

type Spec = Record<string, unknown>;
const PEM_CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const PEM_KEY = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
const bundled = (b: unknown): Spec => ({ provider: { type: "Bundled", bundled: b } });
const inline = (value: string) => ({ type: "InsecureInline", insecureInline: { value } });
const withCa = (certificate: unknown, privateKey: unknown = inline("key")) => bundled({ ca: { certificate, privateKey } });

const identity = test.macro({
  exec(t, spec: Spec, expected: [string, string][]) {
    // Given a MeshIdentity spec; when validated; then exactly these violations, in this order
    t.deepEqual(meshIdentityViolations(spec).list.map((v) => [v.field, v.message]), expected);
  },
  title: (provided = "") => `mesh identity validation › ${provided}`,
});

const trust = test.macro({
  exec(t, spec: Spec, expected: [string, string][]) {
    // Given a MeshTrust spec; when validated; then exactly these violations, in this order
    t.deepEqual(meshTrustViolations(spec).list.map((v) => [v.field, v.message]), expected);
  },
  title: (provided = "") => `mesh trust validation › ${provided}`,
});

test("an empty spec is valid (every section optional)", identity, {}, []);
test("selector, spiffeID and provider of the wrong shape", identity, { selector: "x", spiffeID: 3, provider: [] }, [
  ["spec.selector", "must be an object"],
  ["spec.spiffeID", "must be an object"],
  ["spec.provider", "must be an object"],
]);
test("matchLabels must map strings to strings", identity, { selector: { dataplane: { matchLabels: { app: 1 } } } }, [["spec.selector.dataplane.matchLabels.app", "must be a string"]]);
test("spiffeID templates that do not parse name their field", identity, { spiffeID: { trustDomain: "{{ .Mesh", path: "/ns/{{ end }}" } }, [
  ["spec.spiffeID.trustDomain", "couldn't parse template: template: :1: unclosed action"],
  ["spec.spiffeID.path", "couldn't parse template: template: :1: unexpected {{end}}"],
]);
test("templates that parse are accepted", identity, { spiffeID: { trustDomain: "{{ .Mesh }}.{{ .Zone }}.mesh.local", path: "/ns/{{ .Namespace }}/sa/{{ .ServiceAccount }}" } }, []);
test("an unknown provider type lists the three", identity, { provider: { type: "Vault" } }, [["spec.provider.type", '"Vault" must be one of ["Bundled", "Spire", "Extension"]']]);
test("a provider with no type", identity, { provider: {} }, [["spec.provider.type", '"" must be one of ["Bundled", "Spire", "Extension"]']]);
test("Spire needs its configuration", identity, { provider: { type: "Spire" } }, [["spec.provider.spire", "configuration needs to be defined"]]);
test("Spire given null needs its configuration", identity, { provider: { type: "Spire", spire: null } }, [["spec.provider.spire", "configuration needs to be defined"]]);
test("Spire with an empty configuration is valid", identity, { provider: { type: "Spire", spire: {} } }, []);
test("Spire agent timeout must be a duration", identity, { provider: { type: "Spire", spire: { agent: { timeout: "soon" } } } }, [["spec.provider.spire.agent.timeout", "must be a valid duration"]]);
test("Spire agent timeout must not be negative", identity, { provider: { type: "Spire", spire: { agent: { timeout: "-1s" } } } }, [["spec.provider.spire.agent.timeout", "must not be negative when defined"]]);
test("Spire agent timeout of a second is valid", identity, { provider: { type: "Spire", spire: { agent: { timeout: "1s" } } } }, []);
test("Spire agent of the wrong shape", identity, { provider: { type: "Spire", spire: { agent: "fast" } } }, [["spec.provider.spire.agent", "must be an object"]]);
test("Extension needs its configuration", identity, { provider: { type: "Extension", extension: "x" } }, [["spec.provider.extension", "configuration needs to be defined"]]);
test("Extension needs a name", identity, { provider: { type: "Extension", extension: { name: "" } } }, [["spec.provider.extension.name", "extension name needs to be defined"]]);
test("Extension with a name is valid", identity, { provider: { type: "Extension", extension: { name: "vault" } } }, []);
test("Bundled needs its configuration", identity, { provider: { type: "Bundled" } }, [["spec.provider.bundled", "configuration needs to be defined"]]);
test("Bundled without autogenerate needs a CA", identity, bundled({}), [["spec.provider.bundled.ca", "must be defined"]]);
test("Bundled with autogenerate must not name a CA", identity, bundled({ autogenerate: { enabled: true }, ca: {} }), [["spec.provider.bundled.ca", "shouldn't be defined once using autogenerated"]]);
test("Bundled with autogenerate and a null CA is valid", identity, bundled({ autogenerate: { enabled: true }, ca: null }), []);
test("Bundled with autogenerate off still needs a CA", identity, bundled({ autogenerate: { enabled: false } }), [["spec.provider.bundled.ca", "must be defined"]]);
test("meshTrustCreation is Enabled or Disabled", identity, bundled({ autogenerate: { enabled: true }, meshTrustCreation: "Maybe" }), [
  ["spec.provider.bundled.meshTrustCreation", '"Maybe" must be one of ["Enabled", "Disabled"]'],
]);
test("meshTrustCreation Disabled is valid", identity, bundled({ autogenerate: { enabled: true }, meshTrustCreation: "Disabled" }), []);
test("certificate expiry must be a duration", identity, bundled({ autogenerate: { enabled: true }, certificateParameters: { expiry: "a while" } }), [
  ["spec.provider.bundled.certificateParameters.expiry", "must be a valid duration"],
]);
test("certificate expiry must not be negative", identity, bundled({ autogenerate: { enabled: true }, certificateParameters: { expiry: "-24h" } }), [
  ["spec.provider.bundled.certificateParameters.expiry", "must not be negative when defined"],
]);
test("a CA from inline values is valid", identity, withCa(inline("cert")), []);
test("a CA's certificate and key must be defined", identity, bundled({ ca: {} }), [
  ["spec.provider.bundled.ca.certificate", "must be defined"],
  ["spec.provider.bundled.ca.privateKey", "must be defined"],
]);
test("a data source of an unknown type lists the four", identity, withCa({ type: "Url" }), [["spec.provider.bundled.ca.certificate.type", "Url must be one of: EnvVar, InsecureInline, File, Secret"]]);
test("an EnvVar source needs its name", identity, withCa({ type: "EnvVar", envVar: { name: "" } }), [["spec.provider.bundled.ca.certificate.envVar.name", "must be defined"]]);
test("an EnvVar source needs its section", identity, withCa({ type: "EnvVar" }), [["spec.provider.bundled.ca.certificate.envVar", "must be defined"]]);
test("an EnvVar source with a name is valid", identity, withCa({ type: "EnvVar", envVar: { name: "CA_CERT" } }), []);
test("an inline source needs its value", identity, withCa({ type: "InsecureInline", insecureInline: {} }), [["spec.provider.bundled.ca.certificate.insecureInline.value", "must be defined"]]);
test("a File source needs its path", identity, withCa({ type: "File", file: { path: 7 } }), [["spec.provider.bundled.ca.certificate.file.path", "must be defined"]]);
test("a File source with a path is valid", identity, withCa({ type: "File", file: { path: "/etc/ca.pem" } }), []);
test("a Secret source needs its secretRef", identity, withCa({ type: "Secret" }), [["spec.provider.bundled.ca.certificate.secretRef", "must be defined"]]);
test("a Secret source's ref is of kind Secret and has a name", identity, withCa({ type: "Secret", secretRef: { kind: "ConfigMap", name: "" } }), [
  ["spec.provider.bundled.ca.certificate.secretRef.kind", "ConfigMap must be one of: Secret"],
  ["spec.provider.bundled.ca.certificate.secretRef.name", "must be defined"],
]);
test("a Secret source with kind and name is valid", identity, withCa({ type: "Secret", secretRef: { kind: "Secret", name: "ca" } }), []);
test("the key is checked like the certificate", identity, withCa(inline("cert"), { type: "File" }), [["spec.provider.bundled.ca.privateKey.file", "must be defined"]]);

test("a PEM certificate bundle and a trust domain are valid", trust, { caBundles: [{ type: "Pem", pem: { value: PEM_CERT } }], trustDomain: "default.mesh.local" }, []);
test("no bundles and no trust domain", trust, {}, [
  ["spec.caBundles", "must not be empty"],
  ["spec.trustDomain", "trustDomain needs to be defined"],
]);
test("bundles that are not a list", trust, { caBundles: "pem", trustDomain: "d" }, [["spec.caBundles", "must be a list"]]);
test("an empty bundle list", trust, { caBundles: [], trustDomain: "d" }, [["spec.caBundles", "must not be empty"]]);
test("each bundle is of type Pem with a certificate", trust, { caBundles: [{ type: "Der" }, "x", { type: "Pem" }, { type: "Pem", pem: { value: PEM_KEY } }, { type: "Pem", pem: { value: "MIIB" } }], trustDomain: "d" }, [
  ["spec.caBundles[0].type", "Der must be one of: Pem"],
  ["spec.caBundles[1].type", " must be one of: Pem"],
  ["spec.caBundles[2].pem", "must be defined"],
  ["spec.caBundles[3].pem.value", "provided certificate has incorrect format"],
  ["spec.caBundles[4].pem.value", "provided certificate has incorrect format"],
]);
test("a PEM value that is not a string", trust, { caBundles: [{ type: "Pem", pem: { value: 1 } }], trustDomain: "d" }, [["spec.caBundles[0].pem.value", "provided certificate has incorrect format"]]);
test("a certificate after text and with CRLF line ends is accepted", trust, { caBundles: [{ type: "Pem", pem: { value: `issuer: x\r\n${PEM_CERT.replace(/\n/g, "\r\n")}` } }], trustDomain: "d" }, []);
test("a PEM block whose END names another type is not a certificate", trust, { caBundles: [{ type: "Pem", pem: { value: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END KEY-----\n" } }], trustDomain: "d" }, [
  ["spec.caBundles[0].pem.value", "provided certificate has incorrect format"],
]);
test("a trust domain that is not a string", trust, { caBundles: [{ type: "Pem", pem: { value: PEM_CERT } }], trustDomain: 5 }, [["spec.trustDomain", "must be a string"]]);
test("a trust domain of 254 characters is too long; 253 is not", trust, { caBundles: [{ type: "Pem", pem: { value: PEM_CERT } }], trustDomain: "a".repeat(254) }, [
  ["spec.trustDomain", "must not be longer than 253 characters"],
]);
test("a trust domain of 253 characters", trust, { caBundles: [{ type: "Pem", pem: { value: PEM_CERT } }], trustDomain: "a".repeat(253) }, []);

// a CA bundle is a certificate: a block of any private-key type is refused, any other PEM type is taken
const pemBlock = (type: string) => `-----BEGIN ${type}-----\nMIIE\n-----END ${type}-----\n`;
for (const type of ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]) {
  test(`a CA bundle holding a ${type} block is not a certificate`, trust, { caBundles: [{ type: "Pem", pem: { value: pemBlock(type) } }], trustDomain: "d" }, [
    ["spec.caBundles[0].pem.value", "provided certificate has incorrect format"],
  ]);
}
for (const type of ["CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CRL"]) {
  test(`a CA bundle holding a ${type} block is accepted`, trust, { caBundles: [{ type: "Pem", pem: { value: pemBlock(type) } }], trustDomain: "d" }, []);
}

// each optional section: its parts are optional too, and a wrong part names its own path
test("a selector without its dataplane part is valid", identity, { selector: {} }, []);
test("a dataplane selector without matchLabels is valid", identity, { selector: { dataplane: {} } }, []);
test("a dataplane selector of the wrong shape", identity, { selector: { dataplane: "web" } }, [["spec.selector.dataplane", "must be an object"]]);
test("a spiffeID without trustDomain or path is valid", identity, { spiffeID: {} }, []);
test("spiffeID parts that are not strings name their field", identity, { spiffeID: { trustDomain: 3, path: true } }, [
  ["spec.spiffeID.trustDomain", "must be a string"],
  ["spec.spiffeID.path", "must be a string"],
]);
test("Extension without a name", identity, { provider: { type: "Extension", extension: {} } }, [["spec.provider.extension.name", "extension name needs to be defined"]]);
test("Extension named by a number", identity, { provider: { type: "Extension", extension: { name: 7 } } }, [["spec.provider.extension.name", "extension name needs to be defined"]]);

// durations: only a minus before a valid duration is "negative"; every other text or type is no duration
const spireTimeout = (timeout: unknown): Spec => ({ provider: { type: "Spire", spire: { agent: { timeout } } } });
test("Spire agent timeout of several digits is valid", identity, spireTimeout("10s"), []);
test("Spire agent timeout of a compound duration is valid", identity, spireTimeout("1m30s"), []);
test("Spire agent timeout given as a number is no duration", identity, spireTimeout(5), [["spec.provider.spire.agent.timeout", "must be a valid duration"]]);
test("Spire agent timeout of a minus and no duration is no duration", identity, spireTimeout("-soon"), [["spec.provider.spire.agent.timeout", "must be a valid duration"]]);
test("certificate expiry of several digits is valid", identity, bundled({ autogenerate: { enabled: true }, certificateParameters: { expiry: "720h" } }), []);

test("a PEM value given as a list is not a certificate, even holding one", trust, { caBundles: [{ type: "Pem", pem: { value: [PEM_CERT] } }], trustDomain: "d" }, [
  ["spec.caBundles[0].pem.value", "provided certificate has incorrect format"],
]);
