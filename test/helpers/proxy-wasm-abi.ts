// proxy-wasm ABI 0.2.1 as Envoy links it (proxy-wasm/spec abi-versions/v0.2.1, proxy-wasm-cpp-host): codes, the import names that
// link, the calls allowed during _initialize, and the export signatures Envoy checks.

export const Status = {
  Ok: 0, NotFound: 1, BadArgument: 2, SerializationFailure: 3, ParseFailure: 4, BadExpression: 5,
  InvalidMemoryAccess: 6, Empty: 7, CasMismatch: 8, ResultMismatch: 9, InternalFailure: 10,
  BrokenConnection: 11, Unimplemented: 12,
} as const;

export const LogLevel = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, critical: 5 } as const;
export type LogLevelName = keyof typeof LogLevel;

export const MapType = {
  RequestHeaders: 0, RequestTrailers: 1, ResponseHeaders: 2, ResponseTrailers: 3,
  GrpcInitialMetadata: 4, GrpcTrailingMetadata: 5, HttpCallResponseHeaders: 6, HttpCallResponseTrailers: 7,
} as const;

export const BufferType = {
  RequestBody: 0, ResponseBody: 1, DownstreamData: 2, UpstreamData: 3, HttpCallResponseBody: 4,
  GrpcReceiveBuffer: 5, VmConfiguration: 6, PluginConfiguration: 7, CallData: 8,
} as const;

export const MetricType = { Counter: 0, Gauge: 1, Histogram: 2 } as const;

/** Header actions; the host converts StopIteration (1) and anything > 4 to 4, and forces 4 after a local reply. */
export const HeaderAction = {
  Continue: 0, StopIteration: 1, ContinueAndEndStream: 2, StopAllIterationAndBuffer: 3, StopAllIterationAndWatermark: 4,
} as const;

/** `env` functions proxy-wasm-cpp-host registers for ABI 0.2.1, plus Envoy's envoy_resolve_dns. */
export const ENV_IMPORTS: ReadonlySet<string> = new Set([
  "proxy_log", "proxy_get_log_level", "proxy_get_status", "proxy_set_tick_period_milliseconds",
  "proxy_get_current_time_nanoseconds", "proxy_get_property", "proxy_set_property", "proxy_get_buffer_bytes",
  "proxy_get_buffer_status", "proxy_set_buffer_bytes", "proxy_get_header_map_value", "proxy_add_header_map_value",
  "proxy_replace_header_map_value", "proxy_remove_header_map_value", "proxy_get_header_map_pairs",
  "proxy_set_header_map_pairs", "proxy_get_header_map_size", "proxy_send_local_response", "proxy_continue_stream",
  "proxy_close_stream", "proxy_http_call", "proxy_grpc_call", "proxy_grpc_stream", "proxy_grpc_send",
  "proxy_grpc_cancel", "proxy_grpc_close", "proxy_define_metric", "proxy_increment_metric", "proxy_record_metric",
  "proxy_get_metric", "proxy_get_shared_data", "proxy_set_shared_data", "proxy_register_shared_queue",
  "proxy_resolve_shared_queue", "proxy_enqueue_shared_queue", "proxy_dequeue_shared_queue",
  "proxy_set_effective_context", "proxy_done", "proxy_call_foreign_function",
  "pthread_equal", "emscripten_notify_memory_growth", "envoy_resolve_dns",
]);

/** WASI functions, registered under both wasi_snapshot_preview1 and wasi_unstable. */
export const WASI_IMPORTS: ReadonlySet<string> = new Set([
  "fd_write", "fd_read", "fd_seek", "fd_close", "fd_fdstat_get", "fd_fdstat_set_flags", "fd_fdstat_set_rights",
  "environ_get", "environ_sizes_get", "args_get", "args_sizes_get", "clock_time_get", "clock_res_get", "random_get",
  "sched_yield", "poll_oneoff", "proc_exit", "path_open", "fd_prestat_get", "fd_prestat_dir_name",
  "path_filestat_get", "fd_filestat_get", "fd_advise", "fd_allocate", "fd_datasync", "fd_filestat_set_size",
  "fd_filestat_set_times", "fd_pread", "fd_pwrite", "fd_readdir", "fd_renumber", "fd_sync", "fd_tell",
  "path_create_directory", "path_filestat_set_times", "path_link", "path_readlink", "path_remove_directory",
  "path_rename", "path_symlink", "path_unlink_file", "sock_accept", "sock_recv", "sock_send", "sock_shutdown",
]);

export const WASI_MODULES: ReadonlySet<string> = new Set(["wasi_snapshot_preview1", "wasi_unstable"]);

/** The only host calls V8 allows while _initialize/_start/main run ("restricted_callback" otherwise). */
export const INIT_ALLOWED_IMPORTS: ReadonlySet<string> = new Set([
  "env.proxy_log", "env.emscripten_notify_memory_growth",
  ...[...WASI_MODULES].flatMap((m) => [...WASI_IMPORTS].filter((n) => n !== "sched_yield" && n !== "proc_exit").map((n) => `${m}.${n}`)),
]);

/** Would Envoy link this import? Memories and tables are accepted; anything else must be a known function. */
export function envoyLinks(imp: WebAssembly.ModuleImportDescriptor): boolean {
  if (imp.kind === "memory" || imp.kind === "table") return true;
  if (imp.kind !== "function") return false;
  if (imp.module === "env") return ENV_IMPORTS.has(imp.name);
  return WASI_MODULES.has(imp.module) && WASI_IMPORTS.has(imp.name);
}

type Sig = { params: string[]; results: string[] };
const sig = (params: number, results = 0, resultType = "i32"): Sig => ({
  params: Array(params).fill("i32"), results: Array(results).fill(resultType),
});

/** Exported callbacks Envoy looks up, with the signatures it checks ("Bad function signature for: X"). */
export const EXPORT_SIGNATURES: Readonly<Record<string, Sig>> = {
  proxy_abi_version_0_2_1: sig(0),
  proxy_on_memory_allocate: sig(1, 1), malloc: sig(1, 1),
  _initialize: sig(0), _start: sig(0), main: sig(2, 1), __main_void: sig(0, 1),
  proxy_on_context_create: sig(2), proxy_on_vm_start: sig(2, 1), proxy_on_configure: sig(2, 1),
  proxy_validate_configuration: sig(2, 1), proxy_on_tick: sig(1), proxy_on_queue_ready: sig(2),
  proxy_on_foreign_function: sig(3),
  proxy_on_request_headers: sig(3, 1), proxy_on_response_headers: sig(3, 1),
  proxy_on_request_body: sig(3, 1), proxy_on_response_body: sig(3, 1),
  proxy_on_request_trailers: sig(2, 1), proxy_on_response_trailers: sig(2, 1),
  proxy_on_request_metadata: sig(2, 1), proxy_on_response_metadata: sig(2, 1),
  proxy_on_http_call_response: sig(5),
  proxy_on_grpc_receive_initial_metadata: sig(3), proxy_on_grpc_receive: sig(3),
  proxy_on_grpc_receive_trailing_metadata: sig(3), proxy_on_grpc_close: sig(3),
  proxy_on_new_connection: sig(1, 1), proxy_on_downstream_data: sig(3, 1), proxy_on_upstream_data: sig(3, 1),
  proxy_on_downstream_connection_close: sig(2), proxy_on_upstream_connection_close: sig(2),
  proxy_on_done: sig(1, 1), proxy_on_log: sig(1), proxy_on_delete: sig(1),
  envoy_on_resolve_dns: sig(3), envoy_on_stats_update: sig(2),
};
