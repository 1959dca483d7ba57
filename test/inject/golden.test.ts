// Golden files for both sidecar modes × Deployment, StatefulSet, Job, CronJob (UPDATE_GOLDEN=1
// rewrites them), and every rendered manifest validated against Kubernetes' own schemas for the
// oldest and newest Kubernetes API we claim, unknown fields included.
import test from "ava";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parse, parseAllDocuments } from "yaml";
import { CLASSIC_FLOOR, KUBERNETES_VERSIONS, schemaViolations } from "../helpers/k8s-schema.js";
import { fixture, injected, TESTDATA } from "./helpers.js";

const INPUTS = ["deployment.yaml", "statefulset.json", "job.yaml", "cronjob.yaml", "probes.yaml"];
const MODES = [
  { mode: "classic", argv: ["--no-native-sidecars"] },
  { mode: "native", argv: [] as string[] },
];

function manifests(text: string): Record<string, unknown>[] {
  return text.trimStart().startsWith("{") ? [JSON.parse(text)] : parseAllDocuments(text).map((d) => d.toJS());
}

for (const input of INPUTS) {
  for (const { mode, argv } of MODES) {
    const golden = `${TESTDATA}golden/${mode}-${input}`;
    test(`inject golden › ${mode} ${input}: output matches the golden file`, async (t) => {
      const out = await injected(fixture(input), undefined, argv);
      if (process.env.UPDATE_GOLDEN === "1") writeFileSync(golden, out);
      if (!existsSync(golden)) return t.fail(`missing ${golden}; run with UPDATE_GOLDEN=1`);
      t.is(out, readFileSync(golden, "utf8"));
    });
    // Each mode's floor: native sidecars need 1.33 (the oldest of KUBERNETES_VERSIONS), classic ones 1.27.
    for (const { name, pkg } of mode === "classic" ? [CLASSIC_FLOOR, ...KUBERNETES_VERSIONS] : KUBERNETES_VERSIONS) {
      test(`inject schema › ${mode} ${input}: valid for Kubernetes ${name}`, async (t) => {
        const out = await injected(fixture(input), undefined, argv);
        for (const m of manifests(out)) t.deepEqual(await schemaViolations(m, pkg), [], `${m.kind} against ${pkg}`);
      });
    }
  }
}

test("inject schema › the check can fail: an unknown container field and a wrong type are reported for both versions", async (t) => {
  const bad = parse(fixture("job.yaml"));
  bad.spec.template.spec.containers[0].restartPolicyy = "Always";
  bad.spec.backoffLimit = "one";
  for (const { pkg } of KUBERNETES_VERSIONS) {
    const found = await schemaViolations(bad, pkg);
    t.true(found.some((v) => v.includes("/spec/template/spec/containers/0/restartPolicyy: unknown field")), found.join("\n"));
    t.true(found.some((v) => v.startsWith("/spec/backoffLimit")), found.join("\n"));
  }
});

test("inject schema › a field only newer Kubernetes knows fails the oldest version's check", async (t) => {
  const job = parse(fixture("job.yaml"));
  job.spec.template.spec.containers[0].restartPolicyRules = [{ action: "Restart", exitCodes: { operator: "In", values: [42] } }];
  const [oldest, newest] = KUBERNETES_VERSIONS;
  t.true((await schemaViolations(job, oldest.pkg)).some((v) => v.includes("restartPolicyRules: unknown field")));
  t.deepEqual(await schemaViolations(job, newest.pkg), []);
});

test("inject schema › native sidecars are below their floor on Kubernetes 1.27: the init container's restartPolicy is unknown there", async (t) => {
  const out = await injected(fixture("job.yaml"));
  const found = await schemaViolations(parse(out), CLASSIC_FLOOR.pkg);
  t.true(found.some((v) => /initContainers\/\d+\/restartPolicy: unknown field/.test(v)), found.join("\n"));
});
