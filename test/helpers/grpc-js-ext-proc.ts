// ExternalProcessor for @grpc/grpc-js (the bench's echo baseline and Envoy emulator, and tests' clients), built
// on the generated message codecs. The sidecar itself never loads grpc-js: the generated code has no services.
import {
  type CallOptions, type ChannelCredentials, type Client, type ClientDuplexStream, type ClientOptions, makeGenericClientConstructor, type Metadata,
} from "@grpc/grpc-js";
import { ProcessingRequest, ProcessingResponse } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";

/** The grpc-js service definition of envoy.service.ext_proc.v3.ExternalProcessor. */
export const ExternalProcessorService = {
  process: {
    path: "/envoy.service.ext_proc.v3.ExternalProcessor/Process",
    requestStream: true,
    responseStream: true,
    requestSerialize: (value: ProcessingRequest): Buffer => Buffer.from(ProcessingRequest.encode(value).finish()),
    requestDeserialize: (value: Buffer): ProcessingRequest => ProcessingRequest.decode(value),
    responseSerialize: (value: ProcessingResponse): Buffer => Buffer.from(ProcessingResponse.encode(value).finish()),
    responseDeserialize: (value: Buffer): ProcessingResponse => ProcessingResponse.decode(value),
  },
} as const;

export interface ExternalProcessorClient extends Client {
  process(metadata?: Metadata, options?: Partial<CallOptions>): ClientDuplexStream<ProcessingRequest, ProcessingResponse>;
}

export const ExternalProcessorClient = makeGenericClientConstructor(ExternalProcessorService, "envoy.service.ext_proc.v3.ExternalProcessor") as unknown as {
  new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>): ExternalProcessorClient;
};
