// validateContainer: a table of broken containers and the field each violation names.
import test from "ava";
import { renderSidecar } from "../../extproc/inject/render.js";
import { validateContainer } from "../../extproc/inject/validate-container.js";
import { settings } from "./helpers.js";

const { sidecar, init } = renderSidecar(settings());

test("inject › the rendered containers are valid", (t) => {
  for (const c of [sidecar, init]) t.deepEqual(validateContainer(c, c.name), [], c.name);
});

const BROKEN: [string, Record<string, unknown>, string][] = [
  ["name not a DNS label", { name: "Meshext_Envoy" }, "name"],
  ["image empty", { image: "" }, "image"],
  ["image with spaces", { image: "envoy proxy" }, "image"],
  ["args not strings", { args: ["--a", 1] }, "args"],
  ["port out of range", { ports: [{ containerPort: 70000 }] }, "ports[0].containerPort"],
  ["port name too long", { ports: [{ containerPort: 1, name: "a-very-long-port-name" }] }, "ports[0].name"],
  ["port protocol", { ports: [{ containerPort: 1, protocol: "HTTP" }] }, "ports[0].protocol"],
  ["duplicate port names", { ports: [{ containerPort: 1, name: "a" }, { containerPort: 2, name: "a" }] }, "ports[1].name"],
  ["env without name", { env: [{ value: "x" }] }, "env[0].name"],
  ["env value not a string", { env: [{ name: "A", value: 1 }] }, "env[0].value"],
  ["bad quantity", { resources: { limits: { memory: "lots" } } }, "resources.limits.memory"],
  ["privileged not a bool", { securityContext: { privileged: "yes" } }, "securityContext.privileged"],
  ["negative uid", { securityContext: { runAsUser: -1 } }, "securityContext.runAsUser"],
  ["capabilities not strings", { securityContext: { capabilities: { add: [1] } } }, "securityContext.capabilities.add"],
  ["probe not an object", { readinessProbe: "/ready" }, "readinessProbe"],
  ["pull policy", { imagePullPolicy: "Sometimes" }, "imagePullPolicy"],
  ["unknown field", { securityContxt: {} }, "securityContxt"],
];

for (const [title, change, field] of BROKEN) {
  test(`inject › invalid container: ${title} → ${field}`, (t) => {
    const violations = validateContainer({ ...sidecar, ...change }, sidecar.name);
    t.deepEqual(violations.map((v) => v.field), [field]);
  });
}
