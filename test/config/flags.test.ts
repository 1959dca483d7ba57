// Flags: defaults < config file < MESHEXT_* env < argv; bad values name the flag; help lists defaults.
import test from "ava";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, formatHelp } from "../../extproc/config/flags.js";
import { loadSidecarConfig, SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";

test("flags › with nothing set the documented defaults apply", (t) => {
  const { config } = loadSidecarConfig([], {});
  t.is(config.grpcListen, "127.0.0.1:9001");
  t.is(config.adminListen, "127.0.0.1:9902");
  t.is(config.drainTimeMs, 30_000);
  t.is(config.drainMinMs, 5_000);
  t.is(config.beforeFirstSync, "deny");
});

test("flags › config file < env < argv", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-flags-"));
  const file = join(dir, "sidecar.yaml");
  writeFileSync(file, "grpc-listen: 127.0.0.1:7001\nadmin-listen: 127.0.0.1:7002\nlog-level: debug\ndrain-time: 10s\n");
  const env = { MESHEXT_ADMIN_LISTEN: "127.0.0.1:8002", MESHEXT_DRAIN_TIME: "20s" };
  const { config } = loadSidecarConfig(["--config", file, "--drain-time=45s"], env);
  t.is(config.grpcListen, "127.0.0.1:7001", "from the file");
  t.is(config.logLevel, "debug", "from the file");
  t.is(config.adminListen, "127.0.0.1:8002", "env beats the file");
  t.is(config.drainTimeMs, 45_000, "argv beats env");
});

test("flags › the config file can also be named by MESHEXT_CONFIG", (t) => {
  const file = join(mkdtempSync(join(tmpdir(), "meshext-flags-")), "c.json");
  writeFileSync(file, JSON.stringify({ mesh: "payments", "trust-kuma-tags-header": true }));
  const { config } = loadSidecarConfig([], { MESHEXT_CONFIG: file });
  t.is(config.mesh, "payments");
  t.true(config.trustKumaTagsHeader);
});

const rejects = test.macro((t, argv: string[], env: Record<string, string>, message: RegExp) => {
  const err = t.throws(() => loadSidecarConfig(argv, env), { instanceOf: ConfigError });
  t.regex(err!.message, message);
});

test("flags › a bad host:port names the flag", rejects, ["--grpc-listen", "localhost"], {}, /--grpc-listen: expected HOST:PORT/);
test("flags › a port above 65535 is refused", rejects, ["--admin-listen", "127.0.0.1:70000"], {}, /--admin-listen/);
test("flags › a bad duration names the flag", rejects, ["--drain-time", "soon"], {}, /--drain-time: expected a duration/);
test("flags › a bad enum lists the allowed values", rejects, ["--before-first-sync", "maybe"], {}, /must be one of allow, deny/);
test("flags › a bad env value names the variable and the flag", rejects, [], { MESHEXT_POLL_INTERVAL: "-3" }, /MESHEXT_POLL_INTERVAL: --poll-interval/);
test("flags › an unknown flag is refused", rejects, ["--nope"], {}, /unknown flag --nope/);
test("flags › a flag without its value is refused", rejects, ["--mesh"], {}, /--mesh: needs a value/);
test("flags › drain-min above drain-time is refused", rejects, ["--drain-min", "40s"], {}, /--drain-min .* must not exceed --drain-time/);
test("flags › a non-http control plane URL is refused", rejects, ["--control-plane", "ftp://x"], {}, /--control-plane: expected an http/);

test("flags › an unknown key in the config file is refused", (t) => {
  const file = join(mkdtempSync(join(tmpdir(), "meshext-flags-")), "c.yaml");
  writeFileSync(file, "grpc-listne: 1.2.3.4:5\n");
  const err = t.throws(() => loadSidecarConfig(["--config", file], {}), { instanceOf: ConfigError });
  t.regex(err!.message, /unknown setting "grpc-listne"/);
});

test("flags › help lists every flag with its default and env variable", (t) => {
  const help = formatHelp("meshext sidecar [flags]", "x", SIDECAR_FLAGS);
  for (const spec of SIDECAR_FLAGS) t.true(help.includes(`--${spec.flag}`), spec.flag);
  t.regex(help, /--grpc-listen HOSTPORT\n.*\[default: 127\.0\.0\.1:9001\] \[env: MESHEXT_GRPC_LISTEN\]/);
  t.regex(help, /--drain-time DURATION\n.*\[default: 30s\]/);
});
