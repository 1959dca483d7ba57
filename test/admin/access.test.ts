// The admin access guard in-process: which peers count as loopback, the token check, and that an
// AdminServer route without a declared access is local-only.
import test from "ava";
import { checkAccess, DEFAULT_ACCESS, hasAdminToken, isLoopbackPeer } from "../../extproc/admin/access.js";
import { AdminServer, json } from "../../extproc/admin/server.js";
import { silentLogger } from "../../extproc/log.js";

test("access › loopback peers: 127.0.0.0/8, ::1 and IPv4-mapped 127.x; nothing else", (t) => {
  for (const a of ["127.0.0.1", "127.1.2.3", "127.10.200.30", "127.255.255.254", "::1", "::ffff:127.0.0.1", "::ffff:127.20.30.40"]) t.true(isLoopbackPeer(a), a);
  for (const a of ["10.0.0.1", "::ffff:10.0.0.1", "127.0.0.1.example", "1127.0.0.1", "::2", "", undefined]) t.false(isLoopbackPeer(a), String(a));
});

test("access › IPv6 addresses that end in ::1 but are not the loopback address are remote peers", (t) => {
  // given link-local, documentation, unique-local and IPv4-compatible addresses whose text ends in "::1"
  const remote = ["fe80::1", "fe80::1%eth0", "2001:db8::1", "fd00::1", "::ffff:10.0.0.1", "1::1", "::1:1", ":::1"];
  // when the guard asks whether they are loopback; then none is, so a local route refuses them
  for (const a of remote) {
    t.false(isLoopbackPeer(a), a);
    t.false(checkAccess("local", { remoteAddress: a, authorization: undefined }, "").allowed, a);
  }
  // while ::1 itself stays loopback
  t.true(checkAccess("local", { remoteAddress: "::1", authorization: undefined }, "").allowed);
});

test("access › the token must match exactly, as a Bearer credential", (t) => {
  t.true(hasAdminToken("Bearer abc123", "abc123"));
  t.true(hasAdminToken("bearer   abc123", "abc123"));
  t.true(hasAdminToken("  Bearer abc123  ", "abc123"), "surrounding spaces are not part of the token");
  for (const h of ["Bearer abc12", "Bearer abc1234", "abc123", "Basic abc123", "xBearer abc123", "Basic Bearer abc123", "Bearer abc123\nx", "", undefined]) t.false(hasAdminToken(h, "abc123"), String(h));
  t.false(hasAdminToken("Bearer ", ""), "no token configured opens nothing");
});

test("access › public answers anyone; local refuses a remote peer without the token", (t) => {
  t.true(checkAccess("public", { remoteAddress: "10.0.0.9", authorization: undefined }, "").allowed);
  const refused = checkAccess("local", { remoteAddress: "10.0.0.9", authorization: undefined }, "");
  t.false(refused.allowed);
  t.true(checkAccess("local", { remoteAddress: "10.0.0.9", authorization: "Bearer t" }, "t").allowed);
  // and the refusal says what would open the route: the token when one is set, else only loopback
  t.deepEqual(refused, { allowed: false, reason: "this endpoint answers only on loopback (no --admin-token is set)" });
  t.deepEqual(checkAccess("local", { remoteAddress: "10.0.0.9", authorization: "Bearer wrong" }, "t"), {
    allowed: false,
    reason: "this endpoint answers only on loopback or with the admin token (Authorization: Bearer …)",
  });
});

test("access › a route registered without an access is local, and listed as such", (t) => {
  const admin = new AdminServer(silentLogger());
  admin.route("POST", "/new-thing", () => json(200, {}));
  admin.route("GET", "/open", () => json(200, {}), "public");
  t.deepEqual(admin.listRoutes(), [
    { method: "POST", path: "/new-thing", access: "local" },
    { method: "GET", path: "/open", access: "public" },
  ]);
});

test("access › the default access answers a loopback peer and refuses a remote one without the token", (t) => {
  // Given the access a route gets when none is named; when a loopback and a remote peer ask without a token
  // Then the loopback peer is answered and the remote one refused, as "local" does
  t.true(checkAccess(DEFAULT_ACCESS, { remoteAddress: "127.0.0.1", authorization: undefined }, "t").allowed);
  t.false(checkAccess(DEFAULT_ACCESS, { remoteAddress: "10.0.0.9", authorization: undefined }, "t").allowed);
  t.is(DEFAULT_ACCESS, "local");
});
