// The built `meshext` executable: help output, exit code 2 and a readable message on bad input.
import test from "ava";
import { spawnSync } from "node:child_process";

const CLI = "dist/extproc/cli.js";
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 20_000 });

test("cli › meshext --help lists the commands", (t) => {
  const r = run(["--help"]);
  t.is(r.status, 0);
  for (const cmd of ["up", "sidecar", "run", "control-plane", "inject"]) t.regex(r.stdout, new RegExp(`\\n  ${cmd} `));
});

test("cli › meshext sidecar --help lists flags with defaults", (t) => {
  const r = run(["sidecar", "--help"]);
  t.is(r.status, 0);
  t.regex(r.stdout, /--grpc-listen HOSTPORT[\s\S]*default: 127\.0\.0\.1:9001/);
  t.regex(r.stdout, /--admin-listen HOSTPORT[\s\S]*default: 127\.0\.0\.1:9902/);
});

test("cli › a bad flag value exits 2 naming the flag", (t) => {
  const r = run(["sidecar", "--grpc-listen", "nowhere"]);
  t.is(r.status, 2);
  t.regex(r.stderr, /meshext sidecar: flag --grpc-listen: expected HOST:PORT/);
  t.is(r.stdout, "");
});

test("cli › a bad environment value exits 2 naming the variable", (t) => {
  const r = run(["sidecar"], { MESHEXT_DRAIN_TIME: "forever" });
  t.is(r.status, 2);
  t.regex(r.stderr, /MESHEXT_DRAIN_TIME: --drain-time/);
});

test("cli › an unknown command exits 2", (t) => {
  const r = run(["frobnicate"]);
  t.is(r.status, 2);
  t.regex(r.stderr, /unknown command "frobnicate"/);
});

test("cli › a port already in use exits 2 with one line naming the flag, and nothing is left listening", async (t) => {
  // given a port somebody else listens on
  const { createServer } = await import("node:net");
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  t.teardown(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  // when the sidecar's gRPC or admin address is that port
  for (const flag of ["--grpc-listen", "--admin-listen"]) {
    const other = flag === "--grpc-listen" ? "--admin-listen" : "--grpc-listen";
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [CLI, "sidecar", flag, `127.0.0.1:${port}`, other, "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => (child.kill("SIGKILL"), resolve(null)), 10_000);
      child.on("exit", (c) => (clearTimeout(timer), resolve(c)));
    });
    // then it exits 2 by itself (a bound gRPC server does not keep it alive) with a readable line, no stack trace
    t.is(code, 2, `${flag}: ${stderr}`);
    t.regex(stderr, new RegExp(`meshext sidecar: flag ${flag}: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`));
    t.notRegex(stderr, /\n\s+at /);
  }
});

test("cli › meshext --version prints package.json's version, and the sidecar's /metrics carries it as meshext_build_info", async (t) => {
  const { readFileSync } = await import("node:fs");
  const { startTestSidecar } = await import("../helpers/sidecar-harness.js");
  const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
  // When the release is asked for
  const r = run(["--version"]);
  // Then it is printed with the Node.js version, exit 0
  t.is(r.status, 0);
  t.is(r.stdout, `meshext ${version} (Node.js ${process.version})\n`);
  // And a running sidecar exports the same release as a constant-1 gauge
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const metrics = await (await fetch(`${h.adminUrl}/metrics`)).text();
  t.true(metrics.includes(`meshext_build_info{version="${version}",nodejs_version="${process.version}"} 1`), metrics.split("\n").filter((l) => l.includes("build_info")).join("\n"));
});
