// Envoy's own .proto files (shipped in @grpc/grpc-js-xds/deps) loaded with protobufjs, for checking YAML
// configs the way Envoy's strict loader does: see envoy-proto-walk.ts.
import { accessSync, constants } from "node:fs";
import { isAbsolute, join } from "node:path";
import protobuf from "protobufjs";

const DEPS = join(process.cwd(), "node_modules", "@grpc", "grpc-js-xds", "deps");
const INCLUDE_DIRS = [
  join(DEPS, "envoy-api"),
  join(DEPS, "xds"),
  join(DEPS, "googleapis"),
  join(DEPS, "protoc-gen-validate"),
  join(process.cwd(), "node_modules", "protobufjs"), // google/protobuf/{api,type,source_context}.proto
];

/** Every config type envoy/envoy.yaml uses, directly or through a typed_config. */
export const ENVOY_PROTO_FILES = [
  "envoy/config/bootstrap/v3/bootstrap.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto",
  "envoy/extensions/filters/http/lua/v3/lua.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/http/wasm/v3/wasm.proto",
  "envoy/extensions/filters/http/health_check/v3/health_check.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
];

/**
 * Envoy 1.37 fields newer than the vendored protos (grpc-js-xds deps), added the way Envoy's wasm.proto declares
 * them: PluginConfig.failure_policy (Envoy PR #31285, 1.29) with its FailurePolicy enum, and fail_open deprecated.
 */
function addNewerFields(root: protobuf.Root): void {
  const plugin = root.lookupType("envoy.extensions.wasm.v3.PluginConfig");
  if (plugin.fields.failure_policy) return;
  plugin.add(new protobuf.Enum("FailurePolicy", { UNSPECIFIED: 0, FAIL_RELOAD: 1, FAIL_CLOSED: 2, FAIL_OPEN: 3 }));
  plugin.add(new protobuf.Field("failure_policy", 7, "FailurePolicy"));
  plugin.fields.fail_open!.options = { ...plugin.fields.fail_open!.options, deprecated: true };
}

let cached: protobuf.Root | undefined;

/** The loaded and resolved root (field names kept as written in the .proto files). */
export function envoyProtoRoot(): protobuf.Root {
  if (cached) return cached;
  const root = new protobuf.Root();
  const original = root.resolvePath.bind(root);
  root.resolvePath = (origin: string, target: string): string => {
    if (isAbsolute(target)) return target;
    for (const dir of INCLUDE_DIRS) {
      const full = join(dir, target);
      try {
        accessSync(full, constants.R_OK);
        return full;
      } catch {
        // try the next include dir
      }
    }
    return original(origin, target) ?? target;
  };
  root.loadSync(ENVOY_PROTO_FILES, { keepCase: true });
  addNewerFields(root);
  root.resolveAll();
  cached = root;
  return root;
}

/** The message type with this full name (no leading dot), or undefined. */
export function lookupMessage(fullName: string): protobuf.Type | undefined {
  try {
    return envoyProtoRoot().lookupType(fullName);
  } catch {
    return undefined;
  }
}
