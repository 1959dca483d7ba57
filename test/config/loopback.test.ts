// The control plane serves without a token only on loopback: IP literals in 127.0.0.0/8 or ::1, or names that resolve only there.
import test from "ava";
import { listensOnLoopbackOnly } from "../../extproc/config/control-plane.js";

test("loopback › IP literals of 127.0.0.0/8 and ::1, and localhost, are loopback", async (t) => {
  for (const hostPort of ["127.0.0.1:5681", "127.3.4.5:0", "[::1]:5681", "localhost:5681", "[::ffff:127.0.0.1]:1"]) {
    t.true(await listensOnLoopbackOnly(hostPort), hostPort);
  }
});

test("loopback › a name that merely starts with 127. is not loopback", async (t) => {
  for (const hostPort of ["127.example.invalid:5681", "127.0.0.1.example.invalid:5681", "0.0.0.0:5681", "[::]:5681", "10.0.0.1:5681"]) {
    t.false(await listensOnLoopbackOnly(hostPort), hostPort);
  }
});
