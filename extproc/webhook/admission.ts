// One AdmissionReview v1 in, one out: the object is injected by the same injector as `meshext inject`
// (JSON in, JSON out) and the difference is answered as a JSONPatch that keeps its key order (json-diff.ts). Opted-out objects are allowed
// unchanged. A refused injection, or any failure of ours, follows the failure policy: Ignore admits the
// object unchanged with a warning (the pod starts without a sidecar), Fail rejects it with the reason.
// Pure but for the patch lookups of the source.
import { formatFailure } from "../inject/failure.js";
import { injectText } from "../inject/injector.js";
import { isObject } from "../inject/json.js";
import type { ContainerPatchSource } from "../inject/patch-source.js";
import type { SidecarChoice } from "../inject/render.js";
import { jsonDiff } from "./json-diff.js";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";
export type FailurePolicy = "Ignore" | "Fail";

export interface AdmissionContext {
  sidecars: SidecarChoice;
  defaultPatches: readonly string[];
  source: ContainerPatchSource;
  failurePolicy: FailurePolicy;
}

/** A body that is not an AdmissionReview v1 request: answered 400 (the API server then applies its own failurePolicy). */
export class BadReview extends Error {}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patchType?: "JSONPatch";
  /** base64 of the JSON Patch. */
  patch?: string;
  warnings?: string[];
  status?: { code: number; message: string };
}

export interface ReviewOutcome {
  review: { apiVersion: string; kind: "AdmissionReview"; response: AdmissionResponse };
  /** What happened, for the log and the metrics. */
  result: "injected" | "skipped" | "unchanged" | "refused_allowed" | "refused_denied";
  message?: string;
}

/** The request's uid and object, or BadReview naming what is wrong. */
function requestOf(body: unknown): { uid: string; object: Record<string, unknown>; namespace: string } {
  if (!isObject(body)) throw new BadReview("body must be a JSON object (an AdmissionReview)");
  if (body.kind !== "AdmissionReview") throw new BadReview('kind must be "AdmissionReview"');
  if (body.apiVersion !== ADMISSION_API_VERSION) throw new BadReview(`apiVersion must be "${ADMISSION_API_VERSION}" (admissionReviewVersions: ["v1"])`);
  const request = body.request;
  if (!isObject(request)) throw new BadReview("request must be an object");
  if (typeof request.uid !== "string" || request.uid === "") throw new BadReview("request.uid must be a non-empty string");
  if (!isObject(request.object)) throw new BadReview("request.object must be an object");
  return { uid: request.uid, object: request.object, namespace: typeof request.namespace === "string" ? request.namespace : "" };
}

function answer(uid: string, response: Omit<AdmissionResponse, "uid">): ReviewOutcome["review"] {
  return { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response: { uid, ...response } };
}

/** The AdmissionReview answering `body`; throws BadReview for a body that is not a v1 request. */
export async function review(body: unknown, ctx: AdmissionContext): Promise<ReviewOutcome> {
  const { uid, object, namespace } = requestOf(body);
  const refused = (message: string): ReviewOutcome =>
    ctx.failurePolicy === "Fail"
      ? { review: answer(uid, { allowed: false, status: { code: 403, message: `meshext: ${message}` } }), result: "refused_denied", message }
      : { review: answer(uid, { allowed: true, warnings: [`meshext: sidecar not injected: ${message}`] }), result: "refused_allowed", message };
  let outcome;
  try {
    outcome = await injectText(JSON.stringify(object), ctx.sidecars, ctx.defaultPatches, ctx.source, namespace ? { namespace } : {});
  } catch (err) {
    return refused(`injection failed: ${(err as Error).message}`);
  }
  if (!outcome.ok) return refused(formatFailure(outcome.failure));
  if (outcome.skipped.length > 0) return { review: answer(uid, { allowed: true }), result: "skipped", message: outcome.skipped.map((s) => `${s.workload}: ${s.reason}`).join("; ") };
  const injected = JSON.parse(outcome.output) as Record<string, unknown>;
  const ops = jsonDiff(object, injected);
  if (ops.length === 0) return { review: answer(uid, { allowed: true }), result: "unchanged" };
  return {
    review: answer(uid, { allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(ops)).toString("base64") }),
    result: "injected",
  };
}
