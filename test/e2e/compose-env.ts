// How the e2e brings up envoy/docker-compose.yml: the services it starts, and the environment that publishes their
// ports on ephemeral host ports (a bare container port), so a machine already using 8080/9090/5681 can run it.
// test/envoy/compose.test.ts checks the compose file reads these variables.

/** The services the e2e starts (not the demo load client). */
export const E2E_SERVICES = ["envoy", "control-plane", "seed", "sidecar", "app", "prometheus"];

/** docker-compose.yml publishes `${VAR:-<host>:<container>}`; the e2e sets each VAR to the container port alone. */
export const EPHEMERAL_PORTS: Record<string, string> = {
  MESHEXT_PUBLISH_INBOUND: "8080",
  MESHEXT_PUBLISH_PROMETHEUS: "9090",
  MESHEXT_PUBLISH_CONTROL_PLANE: "5681",
};
