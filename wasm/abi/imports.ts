// proxy-wasm ABI 0.2.1 host functions (module "env"), declared once; only what is used ends up imported.
// snake_case on purpose: these are the ABI names. Everything returns a proxy_status_t (see host.ts).

// Logging and time.
@external("env", "proxy_log")
export declare function proxy_log(level: u32, messagePtr: usize, messageLen: usize): u32;
@external("env", "proxy_get_log_level")
export declare function proxy_get_log_level(retLevel: usize): u32;
@external("env", "proxy_get_current_time_nanoseconds")
export declare function proxy_get_current_time_nanoseconds(retNanos: usize): u32;
@external("env", "proxy_set_tick_period_milliseconds")
export declare function proxy_set_tick_period_milliseconds(periodMs: u32): u32;
@external("env", "proxy_get_status")
export declare function proxy_get_status(retCode: usize, retPtr: usize, retLen: usize): u32;

// Properties.
@external("env", "proxy_get_property")
export declare function proxy_get_property(pathPtr: usize, pathLen: usize, retPtr: usize, retLen: usize): u32;
@external("env", "proxy_set_property")
export declare function proxy_set_property(pathPtr: usize, pathLen: usize, valuePtr: usize, valueLen: usize): u32;

// Buffers.
@external("env", "proxy_get_buffer_bytes")
export declare function proxy_get_buffer_bytes(bufferType: u32, start: u32, maxSize: u32, retPtr: usize, retLen: usize): u32;
@external("env", "proxy_get_buffer_status")
export declare function proxy_get_buffer_status(bufferType: u32, retLen: usize, retFlags: usize): u32;
@external("env", "proxy_set_buffer_bytes")
export declare function proxy_set_buffer_bytes(bufferType: u32, start: u32, size: u32, dataPtr: usize, dataLen: usize): u32;

// Header maps.
@external("env", "proxy_get_header_map_value")
export declare function proxy_get_header_map_value(mapType: u32, keyPtr: usize, keyLen: usize, retPtr: usize, retLen: usize): u32;
@external("env", "proxy_add_header_map_value")
export declare function proxy_add_header_map_value(mapType: u32, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): u32;
@external("env", "proxy_replace_header_map_value")
export declare function proxy_replace_header_map_value(mapType: u32, keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize): u32;
@external("env", "proxy_remove_header_map_value")
export declare function proxy_remove_header_map_value(mapType: u32, keyPtr: usize, keyLen: usize): u32;
@external("env", "proxy_get_header_map_pairs")
export declare function proxy_get_header_map_pairs(mapType: u32, retPtr: usize, retLen: usize): u32;
@external("env", "proxy_set_header_map_pairs")
export declare function proxy_set_header_map_pairs(mapType: u32, pairsPtr: usize, pairsLen: usize): u32;
@external("env", "proxy_get_header_map_size")
export declare function proxy_get_header_map_size(mapType: u32, retSize: usize): u32;

// Stream control and local replies.
@external("env", "proxy_send_local_response")
export declare function proxy_send_local_response(statusCode: u32, detailsPtr: usize, detailsLen: usize, bodyPtr: usize, bodyLen: usize, pairsPtr: usize, pairsLen: usize, grpcStatus: i32): u32;
@external("env", "proxy_continue_stream")
export declare function proxy_continue_stream(streamType: u32): u32;
@external("env", "proxy_close_stream")
export declare function proxy_close_stream(streamType: u32): u32;

// Outbound HTTP calls (answered on the root context).
@external("env", "proxy_http_call")
export declare function proxy_http_call(upstreamPtr: usize, upstreamLen: usize, headersPtr: usize, headersLen: usize, bodyPtr: usize, bodyLen: usize, trailersPtr: usize, trailersLen: usize, timeoutMs: u32, retToken: usize): u32;

// Metrics.
@external("env", "proxy_define_metric")
export declare function proxy_define_metric(metricType: u32, namePtr: usize, nameLen: usize, retId: usize): u32;
@external("env", "proxy_increment_metric")
export declare function proxy_increment_metric(metricId: u32, offset: i64): u32;
@external("env", "proxy_record_metric")
export declare function proxy_record_metric(metricId: u32, value: i64): u32;
@external("env", "proxy_get_metric")
export declare function proxy_get_metric(metricId: u32, retValue: usize): u32;

// Shared data (one store per Envoy process, shared by every worker VM; CAS-guarded writes).
@external("env", "proxy_get_shared_data")
export declare function proxy_get_shared_data(keyPtr: usize, keyLen: usize, retValuePtr: usize, retValueLen: usize, retCas: usize): u32;
@external("env", "proxy_set_shared_data")
export declare function proxy_set_shared_data(keyPtr: usize, keyLen: usize, valuePtr: usize, valueLen: usize, cas: u32): u32;

// Context.
@external("env", "proxy_set_effective_context")
export declare function proxy_set_effective_context(contextId: u32): u32;
@external("env", "proxy_done")
export declare function proxy_done(): u32;
