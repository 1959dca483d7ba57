// Injects every workload of an input text, or none: all patches are resolved, applied and
// validated before any output exists, so a refused injection never leaves half-patched output.
import type { ContainerPatch } from "./container-patch.js";
import { parseInput } from "./document.js";
import type { InjectFailure } from "./failure.js";
import type { ContainerPatchSource } from "./patch-source.js";
import { type Edit, modeFor, NATIVE_SIDECARS_ANNOTATION, patchNamesFor, planInjection } from "./plan.js";
import type { SidecarChoice } from "./render.js";
import { CONTAINER_PATCHES_ANNOTATION, findWorkloads, type Workload } from "./workload.js";

export type InjectOutcome = { ok: true; output: string; injected: string[] } | { ok: false; failure: InjectFailure };

type Resolved = { ok: true; patches: ContainerPatch[] } | { ok: false; failure: InjectFailure };

async function resolvePatches(w: Workload, names: readonly string[], lookup: (name: string) => ReturnType<ContainerPatchSource["get"]>): Promise<Resolved> {
  const patches: ContainerPatch[] = [];
  for (const name of names) {
    const found = await lookup(name);
    switch (found.status) {
      case "found":
        patches.push(found.patch);
        break;
      case "not_found":
        return { ok: false, failure: { code: "patch_not_found", workload: w.id, patch: name, message: `does not exist (looked in ${found.where})` } };
      case "invalid": {
        const list = found.violations.map((v) => `${v.field || "<root>"}: ${v.message}`).join("; ");
        return { ok: false, failure: { code: "patch_invalid", workload: w.id, patch: name, message: `is invalid (${found.where}): ${list}` } };
      }
      case "unavailable":
        return { ok: false, failure: { code: "patch_source_unavailable", workload: w.id, patch: name, message: found.message } };
    }
  }
  return { ok: true, patches };
}

export async function injectText(text: string, sidecars: SidecarChoice, defaultPatches: readonly string[], source: ContainerPatchSource): Promise<InjectOutcome> {
  const parsed = parseInput(text);
  if (!parsed.ok) return { ok: false, failure: { code: "input_invalid", workload: "", message: parsed.message } };
  const cache = new Map<string, ReturnType<ContainerPatchSource["get"]>>();
  const lookup = (name: string) => cache.get(name) ?? cache.set(name, source.get(name)).get(name)!;
  const edits: Edit[][] = [];
  const injected: string[] = [];
  for (const value of parsed.input.values) {
    const docEdits: Edit[] = [];
    for (const found of findWorkloads(value)) {
      if (!found.ok) return { ok: false, failure: { code: "workload_invalid", workload: found.id, message: found.message } };
      const names = patchNamesFor(found.workload, defaultPatches);
      if (!names) {
        return { ok: false, failure: { code: "workload_invalid", workload: found.workload.id, message: `annotation ${CONTAINER_PATCHES_ANNOTATION} must be a string such as "a,b"` } };
      }
      const rendered = modeFor(found.workload, sidecars);
      if (!rendered) {
        return { ok: false, failure: { code: "workload_invalid", workload: found.workload.id, message: `annotation ${NATIVE_SIDECARS_ANNOTATION} must be "true" or "false"` } };
      }
      const resolved = await resolvePatches(found.workload, names, lookup);
      if (!resolved.ok) return resolved;
      const plan = planInjection(found.workload, rendered, resolved.patches);
      if (!plan.ok) return plan;
      docEdits.push(...plan.edits);
      injected.push(found.workload.id);
    }
    edits.push(docEdits);
  }
  return { ok: true, output: parsed.input.render(edits), injected };
}
