// What the embedded control plane serves beyond Kuma's REST API, as listed in `features` of its `GET /`.

/** `GET /meshes/{mesh}/dataplanes/{name}/_policy-set`: one Dataplane's own policy set (control-plane/policy-sets.ts). */
export const POLICY_SET_FEATURE = "dataplane-policy-set";
