// Flags and environment variables never collide: each command's variables are its own or mean the same thing as
// the sidecar's, a variable set for one command never changes another, and an error about two settings says where
// each value came from (flag, variable or config file).
import test from "ava";
import { spawnSync } from "node:child_process";
import { CONTROL_PLANE_ENV_PREFIX, CONTROL_PLANE_FLAGS } from "../../extproc/config/control-plane.js";
import { DRAIN_FLAGS, WAIT_READY_FLAGS } from "../../extproc/config/admin-client.js";
import { ConfigError, envName, type FlagSpec } from "../../extproc/config/flags.js";
import { loadSidecarConfig, SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";
import { INJECT_ENV_PREFIX, INJECT_FLAGS, loadInjectSettings } from "../../extproc/inject/settings.js";

const CLI = "dist/extproc/cli.js";
const TESTDATA = "test/testdata/inject/";

/** Every command's variables, with the setting each one sets (command and flag). */
function variables(): Map<string, string[]> {
  const tables: Array<[string, readonly FlagSpec[], string | undefined]> = [
    ["sidecar", SIDECAR_FLAGS, undefined],
    ["control-plane", CONTROL_PLANE_FLAGS, CONTROL_PLANE_ENV_PREFIX],
    ["inject", INJECT_FLAGS, INJECT_ENV_PREFIX],
    ["drain", DRAIN_FLAGS, undefined],
    ["wait-ready", WAIT_READY_FLAGS, undefined],
  ];
  const byName = new Map<string, string[]>();
  for (const [command, specs, prefix] of tables) for (const s of specs) byName.set(envName(s.flag, prefix), [...(byName.get(envName(s.flag, prefix)) ?? []), `${command} --${s.flag}`]);
  return byName;
}

test("env › a variable read by two commands sets the same thing in both", (t) => {
  // Given every command's flag tables; when the variables read by more than one command are listed
  const shared = Object.fromEntries([...variables()].filter(([, users]) => users.length > 1));
  // Then each is one of these, whose meaning is the same everywhere
  t.deepEqual(shared, {
    MESHEXT_ADMIN_TOKEN: ["sidecar --admin-token", "drain --admin-token", "wait-ready --admin-token"], // the sidecar's admin token
    MESHEXT_ENVOY_ADMIN: ["sidecar --envoy-admin", "wait-ready --envoy-admin"], // the pod's Envoy admin URL
    MESHEXT_CONTROL_PLANE_TOKEN: ["sidecar --control-plane-token", "control-plane --token"], // the control plane's bearer token
    MESHEXT_ADMIN: ["drain --admin", "wait-ready --admin"],
    MESHEXT_TIMEOUT: ["drain --timeout", "wait-ready --timeout"],
  });
});

test("env › MESHEXT_CONTROL_PLANE set for a local sidecar does not change `meshext inject --patches`", (t) => {
  // Given the sidecar's control-plane variable in the shell; when inject runs with a patch directory
  const r = spawnSync(process.execPath, [CLI, "inject", "-f", TESTDATA + "pod.yaml", "--patches", TESTDATA + "patches"], {
    encoding: "utf8",
    env: { ...process.env, MESHEXT_CONTROL_PLANE: "http://127.0.0.1:5681" },
  });
  // Then it injects (no "exclusive" error about a flag never typed)
  t.is(r.status, 0, r.stderr);
  t.regex(r.stdout, /meshext-sidecar|name: meshext/);
});

test("env › an error about two settings names where each value came from", (t) => {
  // inject: one from its own variable, one from the command line
  const inject = t.throws(() => loadInjectSettings(["--patches", "p"], { MESHEXT_INJECT_CONTROL_PLANE: "http://127.0.0.1:5681" }), { instanceOf: ConfigError });
  t.is(inject?.message, "--patches and --control-plane (from environment MESHEXT_INJECT_CONTROL_PLANE) are exclusive: pick one ContainerPatch source");
  // sidecar: one from a variable, one from the command line
  const sidecar = t.throws(() => loadSidecarConfig(["--control-plane", "http://127.0.0.1:5681"], { MESHEXT_POLICIES: "/etc/policies" }), { instanceOf: ConfigError });
  t.is(sidecar?.message, "--policies (from environment MESHEXT_POLICIES) and --control-plane are exclusive: pick one policy source");
  const drain = t.throws(() => loadSidecarConfig(["--drain-time", "1s"], { MESHEXT_DRAIN_MIN: "5s" }), { instanceOf: ConfigError });
  t.regex(drain?.message ?? "", /^--drain-min \(from environment MESHEXT_DRAIN_MIN\) \(5000ms\) must not exceed --drain-time \(1000ms\)/);
});

test("env › each command's --help names its own variables", (t) => {
  const help = (command: string) => spawnSync(process.execPath, [CLI, command, "--help"], { encoding: "utf8" }).stdout;
  t.regex(help("inject"), /\[env: MESHEXT_INJECT_CONTROL_PLANE\]/);
  t.regex(help("control-plane"), /\[env: MESHEXT_CONTROL_PLANE_LISTEN\]/);
  t.regex(help("sidecar"), /\[env: MESHEXT_CONTROL_PLANE\]/);
});
