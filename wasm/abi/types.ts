// proxy-wasm ABI 0.2.1 enumerations (status codes, log levels, map/buffer/metric types, callback actions).

export namespace Status {
  export const Ok: u32 = 0;
  export const NotFound: u32 = 1;
  export const BadArgument: u32 = 2;
  export const SerializationFailure: u32 = 3;
  export const ParseFailure: u32 = 4;
  export const Empty: u32 = 7;
  export const CasMismatch: u32 = 8;
  export const InternalFailure: u32 = 10;
  export const Unimplemented: u32 = 12;
}

export namespace LogLevel {
  export const Trace: u32 = 0;
  export const Debug: u32 = 1;
  export const Info: u32 = 2;
  export const Warn: u32 = 3;
  export const Error: u32 = 4;
  export const Critical: u32 = 5;
}

export namespace MapType {
  export const RequestHeaders: u32 = 0;
  export const RequestTrailers: u32 = 1;
  export const ResponseHeaders: u32 = 2;
  export const ResponseTrailers: u32 = 3;
  export const HttpCallResponseHeaders: u32 = 6;
  export const HttpCallResponseTrailers: u32 = 7;
}

export namespace BufferType {
  export const RequestBody: u32 = 0;
  export const ResponseBody: u32 = 1;
  export const HttpCallResponseBody: u32 = 4;
  export const VmConfiguration: u32 = 6;
  export const PluginConfiguration: u32 = 7;
}

export namespace MetricType {
  export const Counter: u32 = 0;
  export const Gauge: u32 = 1;
  export const Histogram: u32 = 2;
}

/** Return value of proxy_on_*_headers / trailers. */
export namespace HeaderAction {
  export const Continue: u32 = 0;
  export const StopIteration: u32 = 1;
}

/** grpc_status argument of proxy_send_local_response meaning "not a gRPC reply". */
export const NO_GRPC_STATUS: i32 = -1;
