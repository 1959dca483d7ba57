// Shared fixtures for the inject tests: default settings, patch sources, workload builders.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments } from "yaml";
import { parseContainerPatch } from "../../extproc/inject/container-patch.js";
import { injectText, type InjectOutcome } from "../../extproc/inject/injector.js";
import { type ContainerPatchSource, loadPatchDir } from "../../extproc/inject/patch-source.js";
import { renderSidecars } from "../../extproc/inject/render.js";
import { loadInjectSettings } from "../../extproc/inject/settings.js";

/** test/testdata/inject, from dist/test/inject. */
export const TESTDATA = fileURLToPath(new URL("../../../test/testdata/inject/", import.meta.url));
export const PATCH_DIR = TESTDATA + "patches";

export function fixture(name: string): string {
  return readFileSync(TESTDATA + name, "utf8");
}

export function settings(argv: string[] = []) {
  return loadInjectSettings(argv, {}).settings;
}

/** A source holding the given raw ContainerPatch objects (must be valid). */
export function sourceOf(...raw: unknown[]): ContainerPatchSource {
  const byName = new Map<string, ContainerPatchSource extends { get(n: string): Promise<infer R> } ? R : never>();
  for (const r of raw) {
    const parsed = parseContainerPatch(r);
    if (!parsed.ok) throw new Error(`bad test patch: ${JSON.stringify(parsed.violations)}`);
    byName.set(parsed.patch.name, { status: "found", patch: parsed.patch });
  }
  return { get: async (name) => byName.get(name) ?? { status: "not_found", where: "test source" } };
}

export function patchResource(name: string, spec: Record<string, unknown>): unknown {
  return { apiVersion: "kuma.io/v1alpha1", kind: "ContainerPatch", metadata: { name, namespace: "kuma-system" }, spec };
}

/** A minimal Pod, with the container-patches annotation when `patches` is given. */
export function podYaml(patches?: string): string {
  const annotations = patches === undefined ? "" : `  annotations:\n    kuma.io/container-patches: "${patches}"\n`;
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  namespace: demo\n${annotations}spec:\n  containers:\n  - name: app\n    image: example/app:1\n`;
}

export async function run(text: string, source?: ContainerPatchSource, argv: string[] = []): Promise<InjectOutcome> {
  const s = settings(argv);
  return injectText(text, renderSidecars(s), s.defaultPatches, source ?? (await loadPatchDir(PATCH_DIR)));
}

/** Output of a successful injection (fails the test otherwise). */
export async function injected(text: string, source?: ContainerPatchSource, argv: string[] = []): Promise<string> {
  const outcome = await run(text, source, argv);
  if (!outcome.ok) throw new Error(`injection refused: ${JSON.stringify(outcome.failure)}`);
  return outcome.output;
}

type Obj = Record<string, any>;

/** The pod spec of the first workload in a YAML/JSON text. */
export function podSpecOf(text: string, kindPath: string[] = ["spec"]): Obj {
  const doc = parseAllDocuments(text);
  const first = (Array.isArray(doc) ? doc.map((d) => d.toJS()) : [parse(text)]).find((d: Obj) => d && d.kind !== "Service") as Obj;
  return kindPath.reduce<Obj>((at, k) => at[k], first);
}

export function container(spec: Obj, name: string, list: "containers" | "initContainers" = "containers"): Obj {
  const found = (spec[list] as Obj[]).find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name} in ${list}`);
  return found;
}
