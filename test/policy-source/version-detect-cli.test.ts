// The sidecar and control-plane CLIs on an unsupported Kuma version: exit 2 with a readable message, before serving (real processes; the resolution itself: version-detect.test.ts).
import test from "ava";
import { spawn, spawnSync } from "node:child_process";
import { rootServer } from "./fixtures.js";

test("kuma-version › given an unsupported pin on the command line, when the sidecar starts, then it exits 2 with a readable message", (t) => {
  const r = spawnSync(process.execPath, ["dist/extproc/cli.js", "sidecar", "--kuma-version", "1.8"], { encoding: "utf8", timeout: 20_000 });
  t.is(r.status, 2);
  t.regex(r.stderr, /--kuma-version: Kuma 1\.8 is not supported \(supported: 2\.5 to 2\.14 \(later 2\.x releases follow 2\.14\) and 3\.0 \(preview\)\)/);
  const cp = spawnSync(process.execPath, ["dist/extproc/cli.js", "control-plane", "--kuma-version", "banana"], { encoding: "utf8", timeout: 20_000 });
  t.is(cp.status, 2);
  t.regex(cp.stderr, /--kuma-version: "banana" is not a Kuma version/);
});

test("kuma-version › given a control plane reporting Kuma 4.0, when the sidecar starts against it, then it exits 2 before serving", async (t) => {
  const url = await rootServer(t, { product: "Kuma", version: "4.0.0" });
  const child = spawn(process.execPath, ["dist/extproc/cli.js", "sidecar", "--control-plane", url, "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"]);
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  t.is(code, 2);
  t.regex(stderr, /reports version "4\.0\.0": Kuma 4\.0 is not supported[\s\S]*--kuma-version/);
});
