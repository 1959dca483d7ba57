// Inject flags: shared defaults with the sidecar, -f, and a golden snapshot of the rendered defaults.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import test from "ava";
import { parse, stringify } from "yaml";
import { SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";
import { ConfigError } from "../../extproc/config/flags.js";
import { renderSidecar } from "../../extproc/inject/render.js";
import { loadInjectSettings } from "../../extproc/inject/settings.js";
import { TESTDATA } from "./helpers.js";

const GOLDEN = TESTDATA + "rendered-defaults.golden.yaml";

test("inject › the drain time default is the sidecar's", (t) => {
  const { settings } = loadInjectSettings([], {});
  t.is(settings.drainTimeMs, SIDECAR_FLAGS.find((f) => f.key === "drainTimeMs")!.default);
});

test("inject › -f FILE, -fFILE and --file=FILE all name the input", (t) => {
  for (const argv of [["-f", "a.yaml"], ["-fa.yaml"], ["--file=a.yaml"], ["--file", "a.yaml"]]) {
    t.is(loadInjectSettings(argv, {}).settings.file, "a.yaml", argv.join(" "));
  }
});

test("inject › default patches split on commas; empty images are a config error", (t) => {
  t.deepEqual(loadInjectSettings(["--default-patches", " a, b,,c "], {}).settings.defaultPatches, ["a", "b", "c"]);
  t.throws(() => loadInjectSettings(["--sidecar-image="], {}), { instanceOf: ConfigError, message: /--sidecar-image/ });
  t.throws(() => loadInjectSettings(["--probe-port=9903"], {}), { instanceOf: ConfigError, message: /--probe-port and --stats-port must differ/ });
  t.throws(() => loadInjectSettings(["--stats-port=70000"], {}), { instanceOf: ConfigError, message: /--stats-port/ });
  t.throws(() => loadInjectSettings(["--sidecar-control-plane-token-secret=Bad Name"], {}), { instanceOf: ConfigError, message: /NAME or NAME:KEY/ });
});

test("inject › rendered containers with default settings match the golden file (UPDATE_GOLDEN=1 rewrites)", (t) => {
  const rendered = renderSidecar(loadInjectSettings([], {}).settings);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, "# Containers `meshext inject` renders with default settings, before ContainerPatches.\n" + stringify(rendered));
  if (!existsSync(GOLDEN)) return t.fail(`missing ${GOLDEN}; run with UPDATE_GOLDEN=1`);
  t.deepEqual(parse(readFileSync(GOLDEN, "utf8")), JSON.parse(JSON.stringify(rendered)));
});
