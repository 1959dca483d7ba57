// inspect › one ava test per test/testdata/inspect/<endpoint>/<case>.input.yaml: the first line names the
// request and the expected status (`#/meshes/default/dataplanes/dp-1/_rules 200`, optionally ` kuma=3.0` for the
// control plane's --kuma-version), the YAML documents are PUT into a fresh embedded control plane (Mesh at
// /meshes/{name}, the rest at /meshes/{mesh}/{plural}/{name}), and the answer must equal <case>.golden.json
// (Kuma 2.14's inspect JSON shape, or that version's). UPDATE_GOLDEN=1 rewrites.
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { ALL_TYPES } from "../../extproc/kuma-rest/resources.js";
import { parseKumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { assertGolden } from "../policy/golden.js";
import { call, startTestControlPlane, tempDir } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../test/testdata/inspect/", import.meta.url));

for (const endpoint of readdirSync(ROOT)) {
  for (const file of readdirSync(join(ROOT, endpoint)).filter((f) => f.endsWith(".input.yaml")).sort()) {
    const name = file.slice(0, -".input.yaml".length);
    test(`inspect › ${endpoint} › ${name}`, async (t) => {
      const text = readFileSync(join(ROOT, endpoint, file), "utf8");
      const header = /^#(\S+) (\d{3})(?: kuma=(\S+))?\n/.exec(text);
      if (!header) return t.fail(`${file}: the first line must be "#<path> <status>[ kuma=<version>]"`);
      const [, path, status, kuma] = header;
      const dir = await tempDir();
      const cp = await startTestControlPlane(dir.path, kuma ? { kumaVersion: parseKumaVersion(kuma) } : {});
      t.teardown(async () => {
        await cp.stop();
        await dir.remove();
      });
      // given: every document of the input stored through the REST API
      for (const doc of parseAllDocuments(text).map((d) => d.toJS() as Record<string, string>)) {
        const plural = ALL_TYPES.find((ty) => ty.kind === doc.type)?.plural;
        const url = doc.type === "Mesh" ? `/meshes/${doc.name}` : `/meshes/${doc.mesh}/${plural}/${doc.name}`;
        const put = await call(cp.url, "PUT", url, doc);
        t.true(put.status === 200 || put.status === 201, `${file}: PUT ${url} → ${put.status} ${JSON.stringify(put.body)}`);
      }
      // when: the inspect endpoint is read
      const res = await call(cp.url, "GET", path!);
      // then: Kuma's status and JSON (a `next` link names the test server: compared by path and query)
      t.is(res.status, Number(status));
      if (typeof res.body?.next === "string") res.body.next = res.body.next.replace(/^http:\/\/[^/]+/, "http://localhost:5681");
      assertGolden(t, join(ROOT, endpoint, `${name}.golden.json`), res.body);
    });
  }
}
