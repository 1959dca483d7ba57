// The local dataplane from a Kuma Dataplane resource (YAML text or object) or from --mesh and --dataplane-tags:
// what a valid one reads as (mesh, name, proxy type, inbounds, labels), and every violation of an invalid one.
import test from "ava";
import { dataplaneFromObject, dataplaneFromTags, dataplaneFromText } from "../../extproc/policy/documents/dataplane.js";

type Pairs = [string, string][];
const pairs = (r: { violations: { field: string; message: string }[] }): Pairs => r.violations.map((v) => [v.field, v.message]);
const sidecar = (inbound: unknown, extra: Record<string, unknown> = {}) => ({ type: "Dataplane", mesh: "m", name: "dp", networking: { address: "10.0.0.1", inbound }, ...extra });

const rejects = test.macro({
  exec(t, doc: unknown, expected: Pairs, kuma?: "3.0") {
    // Given a Dataplane document; when read; then no dataplane and exactly these violations
    const r = dataplaneFromObject(doc, kuma);
    t.is(r.dataplane, undefined);
    t.deepEqual(pairs(r), expected);
  },
  title: (provided = "") => `dataplane document › rejects ${provided}`,
});

test("a document that is not an object", rejects, "Dataplane", [["document", "must be an object"]]);
test("another type, no name and no networking", rejects, { type: "Mesh" }, [
  ["type", "must be Dataplane"],
  ["name", "must be defined"],
  ["networking", "must be defined"],
]);
test("a mesh that is not a string", rejects, { ...sidecar([{ port: 80, tags: { "kuma.io/service": "web" } }]), mesh: 1 }, [["mesh", "must be a string"]]);
test("an empty name", rejects, { ...sidecar([{ port: 80, tags: { "kuma.io/service": "web" } }]), name: "" }, [["name", "must not be empty"]]);
test("labels that are not strings", rejects, sidecar([{ port: 80, tags: { "kuma.io/service": "web" } }], { labels: { team: 7 } }), [["labels.team", "must be a string"]]);
test("no inbound", rejects, sidecar(undefined), [["networking.inbound", "must have at least one element"]]);
test("an empty inbound list", rejects, sidecar([]), [["networking.inbound", "must have at least one element"]]);
test("an inbound that is not an object", rejects, sidecar(["80"]), [["networking.inbound[0]", "must be an object"]]);
test("an inbound without tags (before 3.0)", rejects, sidecar([{ port: 80 }]), [["networking.inbound[0].tags", "must be defined"]]);
test("an inbound with empty tags", rejects, sidecar([{ port: 80, tags: {} }]), [
  ["networking.inbound[0].tags", "must have at least one element"],
  ["networking.inbound[0].tags.kuma.io/service", "must be defined"],
]);
test("an inbound without kuma.io/service", rejects, sidecar([{ port: 80, tags: { version: "v1" } }]), [["networking.inbound[0].tags.kuma.io/service", "must be defined"]]);
test("an inbound port out of range and a bad state", rejects, sidecar([{ port: 70000, state: "Down", tags: { "kuma.io/service": "web" } }]), [
  ["networking.inbound[0].port", "must be in inclusive range [1, 65535]"],
  ["networking.inbound[0].state", "must be one of Ready, NotReady, Ignored"],
]);
test("a second inbound's problems under its own index", rejects, sidecar([{ port: 80, tags: { "kuma.io/service": "web" } }, { port: "81", tags: { "kuma.io/service": "" } }]), [
  ["networking.inbound[1].tags.kuma.io/service", "tag value must not be empty"],
  ["networking.inbound[1].tags.kuma.io/service", "must be defined"],
  ["networking.inbound[1].port", "must be an integer"],
]);
test("a gateway that is not an object", rejects, { type: "Dataplane", name: "gw", networking: { gateway: "BUILTIN" } }, [
  ["networking.gateway", "must be an object"],
  ["networking.gateway.tags", "must be defined"],
]);
test("a gateway without kuma.io/service", rejects, { type: "Dataplane", name: "gw", networking: { gateway: { type: "BUILTIN", tags: { zone: "a" } } } }, [
  ["networking.gateway.tags.kuma.io/service", "must be defined"],
]);
test("a gateway with empty tags", rejects, { type: "Dataplane", name: "gw", networking: { gateway: { type: "BUILTIN", tags: {} } } }, [
  ["networking.gateway.tags", "must have at least one element"],
  ["networking.gateway.tags.kuma.io/service", "must be defined"],
]);

test("dataplane document › a sidecar: mesh, name, inbounds named by name, then port, then index; state Ignored kept; labels copied", (t) => {
  // Given a Dataplane with three inbounds and labels
  const doc = sidecar(
    [
      { name: "http", port: 8080, tags: { "kuma.io/service": "web", version: "v1" } },
      { port: 9090, state: "Ignored", tags: { "kuma.io/service": "metrics" } },
      { tags: { "kuma.io/service": "grpc" }, state: "Ready" },
    ],
    { labels: { team: "payments" } },
  );
  // When read
  const r = dataplaneFromObject(doc);
  // Then
  t.deepEqual(r, {
    dataplane: {
      mesh: "m",
      name: "dp",
      proxyType: "Sidecar",
      inbounds: [
        { name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": "web", version: "v1" } },
        { name: "9090", port: 9090, tags: { "kuma.io/service": "metrics" }, ignored: true },
        { name: "inbound[2]", tags: { "kuma.io/service": "grpc" } },
      ],
      labels: { team: "payments" },
    },
    violations: [],
  });
});

test("dataplane document › no mesh means the default mesh; no labels, no labels field", (t) => {
  // Given a Dataplane without mesh or labels; when read; then mesh "default" and no labels key
  const r = dataplaneFromObject({ type: "Dataplane", name: "dp", networking: { inbound: [{ port: 80, tags: { "kuma.io/service": "web" } }] } });
  t.is(r.dataplane?.mesh, "default");
  t.false("labels" in (r.dataplane ?? {}));
});

test("dataplane document › a BUILTIN gateway is a Gateway with one inbound of its tags; a DELEGATED one is a Sidecar", (t) => {
  // Given gateway Dataplanes of both types; when read; then
  const builtin = dataplaneFromObject({ type: "Dataplane", name: "gw", networking: { gateway: { type: "BUILTIN", tags: { "kuma.io/service": "edge" } } } });
  t.deepEqual(builtin.dataplane, { mesh: "default", name: "gw", proxyType: "Gateway", inbounds: [{ name: "gateway", tags: { "kuma.io/service": "edge" } }] });
  const delegated = dataplaneFromObject({ type: "Dataplane", name: "gw", networking: { gateway: { type: "DELEGATED", tags: { "kuma.io/service": "edge" } } } });
  t.is(delegated.dataplane?.proxyType, "Sidecar");
  t.deepEqual(delegated.dataplane?.inbounds, [{ name: "gateway", tags: { "kuma.io/service": "edge" } }]);
});

test("dataplane document › under Kuma 3.0 inbounds need no tags", (t) => {
  // Given an inbound without tags; when read as 3.0; then it is an inbound with no tags (and before 3.0 a violation)
  const r = dataplaneFromObject(sidecar([{ port: 80 }]), "3.0");
  t.deepEqual(r.dataplane?.inbounds, [{ name: "80", port: 80, tags: {} }]);
  t.deepEqual(pairs(dataplaneFromObject(sidecar([{ port: 80 }]), "2.14")), [["networking.inbound[0].tags", "must be defined"]]);
});

test("dataplane document › from text: the Dataplane document among others, YAML errors first, none is a violation", (t) => {
  // Given YAML texts; when read; then
  const text = "type: Mesh\nname: default\n---\ntype: Dataplane\nname: dp\nnetworking:\n  inbound:\n    - port: 80\n      tags: {kuma.io/service: web}\n";
  t.deepEqual(dataplaneFromText(text).dataplane, { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "80", port: 80, tags: { "kuma.io/service": "web" } }] });
  t.deepEqual(pairs(dataplaneFromText("type: Mesh\nname: default\n")), [["type", "no document with type: Dataplane"]]);
  const broken = dataplaneFromText("type: Dataplane\nname: [dp\n");
  t.is(broken.dataplane, undefined);
  t.true(broken.violations.length > 0);
  t.notDeepEqual(pairs(broken), [["type", "no document with type: Dataplane"]]);
});

test("dataplane document › from flags: one inbound of the tags, kuma.io/service and a mesh required, every bad part named", (t) => {
  // Given --dataplane-tags values; when read; then
  t.deepEqual(dataplaneFromTags("m", " kuma.io/service = web , version=v1 ,", "me").dataplane, {
    mesh: "m",
    name: "me",
    proxyType: "Sidecar",
    inbounds: [{ name: "inbound[0]", tags: { "kuma.io/service": "web", version: "v1" } }],
  });
  t.is(dataplaneFromTags("m", "kuma.io/service=web").dataplane?.name, "dataplane");
  t.deepEqual(pairs(dataplaneFromTags("", "=x,version=,zone")), [
    ["dataplane-tags", '"=x" is not key=value'],
    ["dataplane-tags", '"version=" is not key=value'],
    ["dataplane-tags", '"zone" is not key=value'],
    ["dataplane-tags", "kuma.io/service is required"],
    ["mesh", "must not be empty"],
  ]);
});

test("dataplane document › given --dataplane-tags with a blank key after a comma and space, when read, then that part is rejected as written, trimmed", (t) => {
  t.deepEqual(pairs(dataplaneFromTags("m", "kuma.io/service=web, =x")), [["dataplane-tags", '"=x" is not key=value']]);
});

test("dataplane document › given valid --dataplane-tags, when read, then a dataplane and no violations", (t) => {
  t.deepEqual(dataplaneFromTags("m", "kuma.io/service=web"), {
    dataplane: { mesh: "m", name: "dataplane", proxyType: "Sidecar", inbounds: [{ name: "inbound[0]", tags: { "kuma.io/service": "web" } }] },
    violations: [],
  });
});
