// Kuma-style REST error bodies (problems.ts): RFC 7807 problem details with invalid_parameters, the older
// details/causes fields, and the status, title and headers of each error the control plane answers with.
// (The `!`s: Stryker's instrumented sources type these factories as possibly undefined; the sandbox build type-checks the tests against them.)
import test from "ava";
import { ApiError, badRequest, invalidResource, methodNotAllowed, notFound, payloadTooLarge, unauthorized } from "../../extproc/control-plane/problems.js";

const violations = [
  { field: "spec.from[0].default.action", message: "must be one of Allow, Deny" },
  { field: "name", message: "name from the URL has to be the same as in body" },
];

test("problems › given an error without violations, when rendered, then a problem body with the detail twice and no parameter lists", (t) => {
  const body = new ApiError(409, "Conflict", "it changed meanwhile").body();
  t.deepEqual(body, { type: "/std-errors", status: 409, title: "Conflict", detail: "it changed meanwhile", details: "it changed meanwhile" });
  t.false("invalid_parameters" in body);
  t.false("causes" in body);
});

test("problems › given an error with violations, when rendered, then each is listed as invalid_parameters (reason) and causes (message), in order", (t) => {
  t.deepEqual(new ApiError(400, "Could not process a resource", "Resource is not valid", violations).body(), {
    type: "/std-errors",
    status: 400,
    title: "Could not process a resource",
    detail: "Resource is not valid",
    details: "Resource is not valid",
    invalid_parameters: violations.map((v) => ({ field: v.field, reason: v.message })),
    causes: violations,
  });
});

test("problems › given an error, when thrown, then it is an Error named ApiError whose message has status, title and detail", (t) => {
  const err = new ApiError(404, "Not Found", "no such thing");
  t.true(err instanceof Error);
  t.is(err.name, "ApiError");
  t.is(err.message, "404 Not Found: no such thing");
  t.deepEqual(err.violations, []);
  t.deepEqual(err.headers, {});
});

test("problems › given a bad request, when it has violations or not, then the title says so", (t) => {
  const plain = badRequest("query parameter wait: expected a duration")!;
  t.like(plain, { status: 400, title: "Bad Request", detail: "query parameter wait: expected a duration" });
  t.deepEqual(plain.violations, []);
  const withViolations = badRequest("invalid query", violations)!;
  t.like(withViolations, { status: 400, title: "Could not process a resource", detail: "invalid query" });
  t.deepEqual(withViolations.violations, violations);
});

test("problems › given an invalid resource, when answered, then 400 'Resource is not valid' with its violations", (t) => {
  const err = invalidResource(violations)!;
  t.like(err, { status: 400, title: "Could not process a resource", detail: "Resource is not valid" });
  t.deepEqual(err.body().causes, violations);
});

test("problems › given a missing resource, when answered, then 404 Not Found with the detail", (t) => {
  t.like(notFound("MeshTrafficPermission default/p not found"), { status: 404, title: "Not Found", detail: "MeshTrafficPermission default/p not found" });
});

test("problems › given a write without the token, when answered, then 401 with a Bearer challenge naming the realm", (t) => {
  const err = unauthorized()!;
  t.like(err, { status: 401, title: "Unauthorized", detail: "this operation needs `Authorization: Bearer <token>` with the control plane's token" });
  t.deepEqual(err.headers, { "www-authenticate": 'Bearer realm="meshext-control-plane"' });
  t.false("invalid_parameters" in err.body());
});

test("problems › given a method the path does not take, when answered, then 405 naming both and an Allow header listing the methods", (t) => {
  const err = methodNotAllowed("PATCH", "/meshes/default", ["GET", "PUT", "DELETE"])!;
  t.like(err, { status: 405, title: "Method Not Allowed", detail: "method PATCH is not allowed on /meshes/default" });
  t.deepEqual(err.headers, { allow: "GET, PUT, DELETE" });
  t.false("invalid_parameters" in err.body());
});

test("problems › given a body over the limit, when answered, then 413 naming the limit in bytes", (t) => {
  t.like(payloadTooLarge(1048576), { status: 413, title: "Payload Too Large", detail: "request body is larger than 1048576 bytes" });
});
