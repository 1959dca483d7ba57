// validate items › the kinds a route's `to` item may name (ROUTE_TO), read through validateItems as a fast unit test of validate-items.ts.
import test from "ava";
import { Issues } from "../../extproc/policy/documents/issues.js";
import { ROUTE_TO, validateItems } from "../../extproc/policy/documents/validate-items.js";
import { versionTraits } from "../../extproc/policy/model/kuma-version.js";

type Pairs = [string, string][];

/** The violations of one `to` item naming `kind` by name, checked against the route destination kinds. */
const routeToViolations = (kind: string): Pairs => {
  const issues = new Issues();
  validateItems([{ targetRef: { kind, name: "backend" }, default: {} }], "spec.to", ROUTE_TO, () => {}, issues, true, versionTraits("2.14"));
  return issues.list.map((v): [string, string] => [v.field, v.message]);
};

for (const kind of ["MeshService", "MeshExternalService", "MeshMultiZoneService"]) {
  test(`validate items › given a route to a ${kind}, when its to item is validated, then it is accepted`, (t) => {
    t.deepEqual(routeToViolations(kind), []);
  });
}

test("validate items › given a route to a MeshGateway, when validated, then the kind must be one of the three service kinds", (t) => {
  t.deepEqual(routeToViolations("MeshGateway"), [["spec.to[0].targetRef.kind", "must be one of MeshService, MeshExternalService, MeshMultiZoneService"]]);
});
