// Decodes Envoy's ProcessingRequest like the generated ts-proto decoder (same result, same errors), but reads
// header values as views of the received bytes: the generated code copies every raw_value into a new Buffer
// and allocates an empty one per header, which made decoding a request's headers cost more than deciding on it.
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { Metadata, type HeaderMap, type HeaderValue } from "../gen/envoy/config/core/v3/base.js";
import {
  HttpBody, type HttpHeaders, HttpHeaders_AttributesEntry, HttpTrailers, type ProcessingRequest, ProcessingRequest_AttributesEntry,
} from "../gen/envoy/service/ext_proc/v3/external_processor.js";

/** Shared by every header without a raw_value; zero bytes, so nothing can write into it. */
const NO_BYTES = Buffer.alloc(0);

/** A Buffer over the bytes a `bytes` field occupies in the message (no copy; the transport hands us a Buffer, whose subarray is one). */
function bytesView(reader: BinaryReader): Buffer {
  const bytes = reader.bytes();
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** What the generated decoders do with a field they do not know: stop at an end-group or 0 tag, else skip it. */
function skipUnknown(reader: BinaryReader, tag: number): boolean {
  if ((tag & 7) === 4 || tag === 0) return false;
  reader.skip(tag & 7);
  return true;
}

function decodeHeaderValue(reader: BinaryReader, length: number): HeaderValue {
  const end = reader.pos + length;
  const header: HeaderValue = { key: "", value: "", rawValue: NO_BYTES };
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 10) header.key = reader.string();
    else if (tag === 18) header.value = reader.string();
    else if (tag === 26) header.rawValue = bytesView(reader);
    else if (!skipUnknown(reader, tag)) break;
  }
  return header;
}

function decodeHeaderMap(reader: BinaryReader, length: number): HeaderMap {
  const end = reader.pos + length;
  const map: HeaderMap = { headers: [] };
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 10) map.headers.push(decodeHeaderValue(reader, reader.uint32()));
    else if (!skipUnknown(reader, tag)) break;
  }
  return map;
}

function decodeHttpHeaders(reader: BinaryReader, length: number): HttpHeaders {
  const end = reader.pos + length;
  const headers: HttpHeaders = { headers: undefined, attributes: {}, endOfStream: false };
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === 10) headers.headers = decodeHeaderMap(reader, reader.uint32());
    else if (tag === 18) {
      const entry = HttpHeaders_AttributesEntry.decode(reader, reader.uint32());
      if (entry.value !== undefined) headers.attributes[entry.key] = entry.value;
    } else if (tag === 24) headers.endOfStream = reader.bool();
    else if (!skipUnknown(reader, tag)) break;
  }
  return headers;
}

/** ProcessingRequest.decode, with headers read in place. */
export function decodeProcessingRequest(bytes: Uint8Array): ProcessingRequest {
  const reader = new BinaryReader(bytes);
  const message: ProcessingRequest = { request: undefined, metadataContext: undefined, attributes: {}, observabilityMode: false };
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    switch (tag) {
      case 18: message.request = { $case: "requestHeaders", requestHeaders: decodeHttpHeaders(reader, reader.uint32()) }; continue;
      case 26: message.request = { $case: "responseHeaders", responseHeaders: decodeHttpHeaders(reader, reader.uint32()) }; continue;
      case 34: message.request = { $case: "requestBody", requestBody: HttpBody.decode(reader, reader.uint32()) }; continue;
      case 42: message.request = { $case: "responseBody", responseBody: HttpBody.decode(reader, reader.uint32()) }; continue;
      case 50: message.request = { $case: "requestTrailers", requestTrailers: HttpTrailers.decode(reader, reader.uint32()) }; continue;
      case 58: message.request = { $case: "responseTrailers", responseTrailers: HttpTrailers.decode(reader, reader.uint32()) }; continue;
      case 66: message.metadataContext = Metadata.decode(reader, reader.uint32()); continue;
      case 74: {
        const entry = ProcessingRequest_AttributesEntry.decode(reader, reader.uint32());
        if (entry.value !== undefined) message.attributes[entry.key] = entry.value;
        continue;
      }
      case 80: message.observabilityMode = reader.bool(); continue;
    }
    if (!skipUnknown(reader, tag)) break;
  }
  return message;
}
