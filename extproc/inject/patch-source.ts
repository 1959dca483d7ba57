// Where ContainerPatches come from: a directory of YAML/JSON files, or the control plane's REST
// API (GET {url}/containerpatches/{name}, Kuma's path for resources outside any mesh).
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type ContainerPatch, parseContainerPatch } from "./container-patch.js";
import type { InjectSettings } from "./settings.js";
import type { Violation } from "./validate-container.js";
import { parseAllDocumentsBounded, yamlLimitViolation } from "../policy/documents/yaml-limits.js";

export type PatchLookup =
  | { status: "found"; patch: ContainerPatch }
  | { status: "not_found"; where: string }
  | { status: "invalid"; where: string; violations: Violation[] }
  | { status: "unavailable"; message: string };

export interface ContainerPatchSource {
  get(name: string): Promise<PatchLookup>;
}

/** Thrown when a patch directory cannot be read or holds a file that names no patch. */
export class PatchSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PatchSourceError";
  }
}

/** No source configured: every name is missing, so any referenced patch refuses injection. */
export const NO_PATCHES: ContainerPatchSource = {
  get: async () => ({ status: "not_found", where: "no --patches directory or --control-plane given" }),
};

const PATCH_FILE = /\.(ya?ml|json)$/;

/**
 * Reads every *.yaml, *.yml, *.json file in `dir` (not recursive; multi-document files allowed).
 * A patch that fails validation only refuses the workloads that reference it.
 */
export async function loadPatchDir(dir: string): Promise<ContainerPatchSource> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => PATCH_FILE.test(f)).sort();
  } catch (err) {
    throw new PatchSourceError(`--patches: cannot read ${dir}: ${(err as Error).message}`);
  }
  const byName = new Map<string, PatchLookup>();
  for (const file of files) {
    const path = join(dir, file);
    const text = await readFile(path, "utf8");
    const tooComplex = yamlLimitViolation(text);
    if (tooComplex) throw new PatchSourceError(`--patches: ${path} ${tooComplex}`);
    let docList;
    try {
      docList = parseAllDocumentsBounded(text);
    } catch (err) {
      throw new PatchSourceError(`--patches: ${path} ${(err as Error).message}`);
    }
    for (const doc of docList) {
      if (doc.errors.length > 0) throw new PatchSourceError(`--patches: ${path}: ${doc.errors[0]!.message}`);
      const raw: unknown = doc.toJS({ maxAliasCount: 0 });
      if (raw === null || raw === undefined) continue;
      const parsed = parseContainerPatch(raw);
      const name = parsed.ok ? parsed.patch.name : parsed.name;
      if (!name) throw new PatchSourceError(`--patches: ${path}: a document has no ContainerPatch name (metadata.name)`);
      if (byName.has(name)) throw new PatchSourceError(`--patches: ${path}: ContainerPatch "${name}" is defined twice`);
      byName.set(name, parsed.ok ? { status: "found", patch: parsed.patch } : { status: "invalid", where: path, violations: parsed.violations });
    }
  }
  return { get: async (name) => byName.get(name) ?? { status: "not_found", where: `--patches ${dir}` } };
}

/** A control plane that does not answer within this is unavailable: injection must not hang. */
const CONTROL_PLANE_TIMEOUT_MS = 5000;

/** " (detail)" from a Kuma / problem-details error body, to tell a missing patch from a missing endpoint. */
function problemDetail(body: string): string {
  try {
    const p = JSON.parse(body) as { detail?: unknown; details?: unknown; title?: unknown };
    const text = p.detail ?? p.details ?? p.title;
    return typeof text === "string" && text !== "" ? ` (${text})` : "";
  } catch {
    return "";
  }
}

export function controlPlaneSource(baseUrl: string, token: string, timeoutMs = CONTROL_PLANE_TIMEOUT_MS): ContainerPatchSource {
  return {
    async get(name) {
      const url = `${baseUrl.replace(/\/+$/, "")}/containerpatches/${encodeURIComponent(name)}`;
      const headers: Record<string, string> = { accept: "application/json" };
      if (token) headers.authorization = `Bearer ${token}`;
      let res: Response;
      let body: string;
      try {
        res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
        body = await res.text();
      } catch (err) {
        return { status: "unavailable", message: `GET ${url}: ${(err as Error).message}` };
      }
      if (res.status === 404) return { status: "not_found", where: `${url}${problemDetail(body)}` };
      if (res.status !== 200) return { status: "unavailable", message: `GET ${url}: HTTP ${res.status}` };
      let raw: unknown;
      try {
        raw = JSON.parse(body);
      } catch {
        return { status: "invalid", where: url, violations: [{ field: "", message: "response is not JSON" }] };
      }
      const parsed = parseContainerPatch(raw);
      if (!parsed.ok) return { status: "invalid", where: url, violations: parsed.violations };
      if (parsed.patch.name !== name) {
        return { status: "invalid", where: url, violations: [{ field: "name", message: `is "${parsed.patch.name}", expected "${name}"` }] };
      }
      return { status: "found", patch: parsed.patch };
    },
  };
}

/** The source the settings name: --control-plane, --patches DIR (read now), or none. */
export async function patchSourceFor(s: Pick<InjectSettings, "controlPlane" | "controlPlaneToken" | "patchesDir">): Promise<ContainerPatchSource> {
  if (s.controlPlane) return controlPlaneSource(s.controlPlane, s.controlPlaneToken);
  if (s.patchesDir) return loadPatchDir(s.patchesDir);
  return NO_PATCHES;
}
