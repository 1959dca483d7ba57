// What follows `--` in `meshext run`: nothing (the located Envoy on a generated bootstrap), Envoy flags only
// (the same, with those flags), or an Envoy command, which brings its own bootstrap when it passes -c.

export interface EnvoyCommandLine {
  /** The Envoy binary named on the command line, if any. */
  binary?: string;
  args: string[];
  /** -c / --config-path / --config-yaml given: the user's bootstrap, none is generated. */
  ownBootstrap: boolean;
}

const BOOTSTRAP_FLAGS = new Set(["-c", "--config-path", "--config-yaml"]);

export function envoyCommandLine(rest: readonly string[]): EnvoyCommandLine {
  const [first, ...others] = rest;
  const named = first !== undefined && !first.startsWith("-");
  const args = named ? others : [...rest];
  const ownBootstrap = args.some((a) => BOOTSTRAP_FLAGS.has(a.split("=")[0]!));
  return { ...(named ? { binary: first } : {}), args, ownBootstrap };
}
