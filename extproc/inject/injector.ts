// Injects every workload of an input text, or none: all patches are resolved, applied and
// validated before any output exists, so a refused injection never leaves half-patched output.
import type { ContainerPatch } from "./container-patch.js";
import { parseInput } from "./document.js";
import type { InjectFailure } from "./failure.js";
import type { ContainerPatchSource } from "./patch-source.js";
import { admissionOf } from "./opt-outs.js";
import { type Edit, modeFor, NATIVE_SIDECARS_ANNOTATION, patchNamesFor, planInjection } from "./plan.js";
import { podFacts } from "./pod-facts.js";
import { type SidecarChoice, sidecarPorts } from "./render.js";
import { CONTAINER_PATCHES_ANNOTATION, findWorkloads, type Workload } from "./workload.js";

/** A workload left as it was, and why (an opt-out annotation or label, hostNetwork). */
export interface Skipped {
  workload: string;
  reason: string;
}

export type InjectOutcome = { ok: true; output: string; injected: string[]; skipped: Skipped[] } | { ok: false; failure: InjectFailure };

export interface InjectOptions {
  /** The namespace the objects are created in when they name none (the webhook's request namespace). */
  namespace?: string;
}

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

export async function injectText(text: string, sidecars: SidecarChoice, defaultPatches: readonly string[], source: ContainerPatchSource, options: InjectOptions = {}): Promise<InjectOutcome> {
  const parsed = parseInput(text);
  if (!parsed.ok) return { ok: false, failure: { code: "input_invalid", workload: "", message: parsed.message } };
  const cache = new Map<string, ReturnType<ContainerPatchSource["get"]>>();
  const lookup = (name: string) => cache.get(name) ?? cache.set(name, source.get(name)).get(name)!;
  const edits: Edit[][] = [];
  const injected: string[] = [];
  const skipped: Skipped[] = [];
  const s = sidecars.settings;
  for (const value of parsed.input.values) {
    const docEdits: Edit[] = [];
    for (const found of findWorkloads(value)) {
      if (!found.ok) return { ok: false, failure: { code: "workload_invalid", workload: found.id, message: found.message } };
      const admission = admissionOf(found.workload);
      if (admission.action === "skip") {
        skipped.push({ workload: found.workload.id, reason: admission.reason });
        continue;
      }
      if (admission.action === "refuse") return { ok: false, failure: { code: "mesh_conflict", workload: found.workload.id, message: admission.message } };
      const names = patchNamesFor(found.workload, defaultPatches);
      if (!names) {
        return { ok: false, failure: { code: "workload_invalid", workload: found.workload.id, message: `annotation ${CONTAINER_PATCHES_ANNOTATION} must be a string such as "a,b"` } };
      }
      const mode = modeFor(found.workload, sidecars);
      if (!mode) {
        return { ok: false, failure: { code: "workload_invalid", workload: found.workload.id, message: `annotation ${NATIVE_SIDECARS_ANNOTATION} must be "true" or "false"` } };
      }
      const facts = podFacts(found.workload, { probePort: s.probePort, virtualProbes: s.virtualProbes, ...(options.namespace ? { namespace: options.namespace } : {}) });
      if (!facts.ok) return { ok: false, failure: { code: "workload_invalid", workload: found.workload.id, message: facts.message } };
      const taken = sidecarPorts(s).filter((p) => facts.facts.inboundPorts.includes(p) && (p !== s.probePort || facts.facts.virtualProbes));
      if (taken.length > 0) {
        return {
          ok: false,
          failure: { code: "port_conflict", workload: found.workload.id, message: `the app uses port ${taken.join(", ")}, which the sidecar binds in the pod (see docs/inject.md "Ports"; --probe-port and --stats-port move those two)` },
        };
      }
      const resolved = await resolvePatches(found.workload, names, lookup);
      if (!resolved.ok) return resolved;
      const plan = planInjection(found.workload, sidecars.render(mode, facts.facts), resolved.patches, facts.probeEdits, s.statsPort);
      if (!plan.ok) return plan;
      docEdits.push(...plan.edits);
      injected.push(found.workload.id);
    }
    edits.push(docEdits);
  }
  return { ok: true, output: parsed.input.render(edits), injected, skipped };
}
