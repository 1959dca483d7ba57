// Process signal wiring for the drain: SIGTERM and SIGINT go to the controller, which counts them;
// SIGUSR2 (Kuma's drain-forever signal) too. Only the command layer calls this; it returns a
// function that removes the handlers.

export const DRAIN_SIGNALS = ["SIGTERM", "SIGINT", "SIGUSR2"] as const;

export interface SignalTarget {
  signal(name: string): unknown;
}

export function installDrainSignals(target: SignalTarget, proc: Pick<NodeJS.Process, "on" | "off"> = process): () => void {
  const handlers = DRAIN_SIGNALS.map((name) => {
    const handler = () => void target.signal(name);
    proc.on(name, handler);
    return [name, handler] as const;
  });
  return () => {
    for (const [name, handler] of handlers) proc.off(name, handler);
  };
}

/** Installs the handlers, waits until the drain is done (or forced), removes them. */
export async function untilDrained<R>(
  target: SignalTarget & { done: Promise<R> },
  proc: Pick<NodeJS.Process, "on" | "off"> = process,
): Promise<R> {
  const uninstall = installDrainSignals(target, proc);
  try {
    return await target.done;
  } finally {
    uninstall();
  }
}
