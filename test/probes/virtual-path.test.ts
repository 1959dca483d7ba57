// Probe paths: each kind round-trips, anything else is not a probe path, and the flag list splits
// unambiguously (commas inside paths included) and is the same for the same probes in any order.
import test from "ava";
import { formatProbeList, parseProbeList, parseVirtualPath, type VirtualProbe, virtualPath } from "../../extproc/probes/virtual-path.js";

const PROBES: [VirtualProbe, string][] = [
  [{ kind: "http", port: 8080, path: "/healthz" }, "/8080/healthz"],
  [{ kind: "http", port: 8080, path: "/ready?full=1&x=a,b" }, "/8080/ready?full=1&x=a,b"],
  [{ kind: "https", port: 8443, path: "/" }, "/https/8443/"],
  [{ kind: "tcp", port: 5432 }, "/tcp/5432"],
  [{ kind: "grpc", port: 9090, service: "" }, "/grpc/9090"],
  [{ kind: "grpc", port: 9090, service: "pkg.Svc/x" }, "/grpc/9090/pkg.Svc%2Fx"],
];

for (const [probe, path] of PROBES) {
  test(`probe path › ${probe.kind} ${path}: written and read back`, (t) => {
    t.is(virtualPath(probe), path);
    t.deepEqual(parseVirtualPath(path), probe);
  });
}

test("probe path › other paths are not probe paths", (t) => {
  for (const path of ["/", "/ready", "/0/x", "/70000/x", "/tcp/", "/tcp/80/x", "/grpc/abc", "/https/x/y", "/grpc/80/%E0%A4%A", "//8080/x"]) {
    t.is(parseVirtualPath(path), undefined, path);
  }
});

test("probe path › the flag list: sorted, deduplicated, commas escaped, read back to the same paths", (t) => {
  const probes = PROBES.map(([p]) => p);
  const list = formatProbeList([...probes].reverse().concat(probes));
  t.is(list, formatProbeList(probes));
  t.false(list.includes("a,b"), "a comma inside a path is escaped");
  const parsed = parseProbeList(list);
  if (!parsed.ok) return t.fail(parsed.message);
  t.deepEqual([...parsed.paths.keys()].sort(), PROBES.map(([, p]) => p).sort());
});

test("probe path › a list entry that is not a probe path is refused with the entry", (t) => {
  const parsed = parseProbeList("/8080/ok,/nope");
  t.false(parsed.ok);
  if (!parsed.ok) t.regex(parsed.message, /"\/nope" is not a probe path/);
});
