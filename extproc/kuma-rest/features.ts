// What the embedded control plane serves beyond Kuma's REST API, as listed in `features` of its `GET /`.

/** `GET /meshes/{mesh}/dataplanes/{name}/_policy-set`: one Dataplane's own policy set (control-plane/policy-sets.ts). */
export const POLICY_SET_FEATURE = "dataplane-policy-set";

/**
 * A sidecar long-polling its set with this request header (any value) and the ETag of the set it holds may be
 * answered with only what changed since: the answer then carries DELTA_BASE_HEADER (the ETag it is relative to),
 * and each item left as it was is its "kind/name" string instead of the object. A control plane without it
 * answers in full, which the sidecar reads as before.
 */
export const DELTA_REQUEST_HEADER = "x-meshext-policy-set-delta";
export const DELTA_BASE_HEADER = "x-meshext-policy-set-base";

/** How an item left as it was is named in such an answer. */
export function deltaItemKey(type: string, name: string): string {
  return `${type}/${name}`;
}
