// Why an injection was refused: a closed set of codes and one line that names the workload,
// the patch and the operation.

export type FailureCode =
  | "input_invalid"
  | "workload_invalid"
  | "patch_not_found"
  | "patch_invalid"
  | "patch_failed"
  | "container_invalid"
  | "patch_source_unavailable"
  /** Another mesh's proxy (Kuma, Istio, Linkerd) is already in the pod. */
  | "mesh_conflict"
  /** The app uses a port the sidecar binds. */
  | "port_conflict";

export interface InjectFailure {
  code: FailureCode;
  /** e.g. `Deployment shop/web`; empty when the input as a whole is unreadable. */
  workload: string;
  patch?: string;
  /** e.g. `sidecarPatch[1] {"op":"test","path":"/securityContext/privileged","value":false}`. */
  operation?: string;
  message: string;
}

export function formatFailure(f: InjectFailure): string {
  const parts = [f.workload ? `not injecting ${f.workload}` : "not injecting"];
  if (f.patch !== undefined) parts.push(`ContainerPatch "${f.patch}"`);
  if (f.operation !== undefined) parts.push(f.operation);
  return `${parts.join(": ")}: ${f.message} [${f.code}]`;
}
