// `POST /meshes/{mesh}/dataplanes/{name}/_decision-samples` (a meshext extension): a sidecar started with
// --decision-log-push sends `{records: [decision-log record, …]}`; each is checked as `meshext policy what-if` reads
// a log line, and the batch is held (decision-samples.ts) or refused whole: 400 with every violation, 413 when too large.
import { DATAPLANE_TYPE } from "../kuma-rest/resources.js";
import { recordFrom } from "../policy-tools/replay-record.js";
import { ApiError, badRequest, type Violation } from "./problems.js";
import type { ApiReply, ApiRequest, RouteContext } from "./route-context.js";
import { decodeUtf8 } from "./safety.js";

export async function postDecisionSamples(ctx: RouteContext, req: ApiRequest, mesh: string, name: string): Promise<ApiReply> {
  const samples = ctx.decisionSamples;
  if (!ctx.store.get(DATAPLANE_TYPE.kind, mesh, name)) {
    samples.refused("unknown_dataplane");
    throw new ApiError(404, "Could not retrieve Dataplane", `Dataplane ${mesh}/${name} is not registered: samples are kept only for registered dataplanes`);
  }
  let raw: Buffer;
  try {
    raw = await req.body();
  } catch (err) {
    if (err instanceof ApiError && err.status === 413) samples.refused("too_large");
    throw err;
  }
  const records = readBatch(raw, (err) => {
    samples.refused("malformed");
    throw err;
  });
  const max = samples.limits.perDataplane;
  if (records.length > max) {
    samples.refused("too_large", records.length);
    throw new ApiError(413, "Payload Too Large", `${records.length} records in one push; at most ${max} (--decision-samples-per-dataplane)`);
  }
  const violations: Violation[] = [];
  const lines: string[] = [];
  let invalid = 0;
  records.forEach((record, i) => {
    const before = violations.length;
    const read = recordFrom(record);
    if ("malformed" in read) violations.push({ field: `records[${i}]`, message: read.malformed });
    else {
      const r = record as Record<string, unknown>;
      if (r.dataplane !== undefined && r.dataplane !== name) violations.push({ field: `records[${i}].dataplane`, message: `must be ${JSON.stringify(name)}, the dataplane of the URL` });
      if (r.mesh !== undefined && r.mesh !== mesh) violations.push({ field: `records[${i}].mesh`, message: `must be ${JSON.stringify(mesh)}, the mesh of the URL` });
      lines.push(JSON.stringify(keptFields(r, mesh, name)));
    }
    if (violations.length > before) invalid++;
  });
  if (invalid > 0) {
    samples.refused("malformed", records.length);
    // A record can break several rules (dataplane and mesh): the count is of records, every violation is listed.
    throw badRequest(`${invalid} invalid record(s); none of the ${records.length} kept`, violations);
  }
  samples.add(mesh, name, lines);
  return { status: 200, body: { accepted: lines.length, held: samples.held(mesh, name) } };
}

/** The `records` array of a push body; `fail` gets the 400 for anything else. */
function readBatch(raw: Buffer, fail: (err: ApiError) => never): unknown[] {
  let doc: unknown;
  try {
    doc = JSON.parse(decodeUtf8(raw));
  } catch (err) {
    fail(err instanceof ApiError ? err : badRequest(`request body is not JSON: ${(err as Error).message}`));
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) fail(badRequest("invalid push", [{ field: "", message: "must be an object {records: [...]}" }]));
  const records = (doc as { records?: unknown }).records;
  if (!Array.isArray(records)) fail(badRequest("invalid push", [{ field: "records", message: "must be an array of decision-log records" }]));
  return records as unknown[];
}

const STRING_FIELDS = ["time", "requestId", "inbound", "direction", "method", "path", "authority", "outcome", "kind", "policy", "rule", "reason"] as const;
const NUMBER_FIELDS = ["status", "delayMs", "latencyMs"] as const;
const CLIENT_FIELDS = ["tags", "source", "spiffe", "sni"] as const;

/** The record's decision-log fields of the right type, for this dataplane; nothing else is held
 * (an unknown field could be anything: nested past what JSON.stringify can write back, or just bulk). */
function keptFields(r: Record<string, unknown>, mesh: string, name: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const copy = (keys: readonly string[], type: "string" | "number", from: Record<string, unknown>, to: Record<string, unknown>) => {
    for (const k of keys) if (typeof from[k] === type) to[k] = from[k];
  };
  copy(["time", "requestId"], "string", r, out);
  out.dataplane = name;
  out.mesh = mesh;
  copy(STRING_FIELDS.slice(2), "string", r, out);
  copy(NUMBER_FIELDS, "number", r, out);
  if (isObject(r.client)) copy(CLIENT_FIELDS, "string", r.client, (out.client = {}) as Record<string, unknown>);
  if (Array.isArray(r.matched)) out.matched = r.matched.filter((m) => typeof m === "string");
  if (isObject(r.headers)) copy(Object.keys(r.headers), "string", r.headers, (out.headers = {}) as Record<string, unknown>);
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
