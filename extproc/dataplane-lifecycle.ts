// The sidecar's side of the dataplane lifecycle in a control plane (register, heartbeat, draining,
// deregister). The drain controller calls it; a control-plane client implements it.

export type DataplaneStatus = "online" | "draining";

export interface DataplaneLifecycle {
  /** Registers (or re-registers) the dataplane as online and starts heartbeating. */
  register(): Promise<void>;
  /** Reports that the dataplane is draining: clients should stop picking it. */
  markDraining(): Promise<void>;
  /** Removes the dataplane (graceful exit): it must disappear, not linger offline. Stops heartbeats. */
  deregister(): Promise<void>;
}

/** Used when there is no control plane: every call succeeds at once. */
export const NO_CONTROL_PLANE: DataplaneLifecycle = {
  register: async () => {},
  markDraining: async () => {},
  deregister: async () => {},
};
