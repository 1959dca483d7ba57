// Properties of the ext_proc RequestProcessor: any sequence of ProcessingRequest messages (structured, or
// decoded from arbitrary bytes) gets a reply per message, or stops at one INVALID_ARGUMENT; it never throws.
import test from "ava";
import fc from "fast-check";
import { ALLOW_ALL, type Decider } from "../../extproc/decision.js";
import { ProcessingRequest } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { PHASES, RequestProcessor } from "../../extproc/transport/processor.js";
import { budget } from "./budget.js";

const POLICIES = `
type: MeshTrafficPermission
name: base
spec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}, default: {action: Allow}}, {targetRef: {kind: MeshService, name: evil}, default: {action: Deny}}]}
---
type: MeshFaultInjection
name: faults
spec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}, default: {http: [{abort: {httpStatus: 503, percentage: 30}}, {delay: {value: 50ms, percentage: 30}}]}}]}
`;

function engine(): Decider {
  const e = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend").dataplane!, trustKumaTagsHeader: true });
  e.replace(parsePolicyText(POLICIES).policies);
  return e;
}

const headerName = fc.constantFrom(":path", ":method", ":authority", ":status", "x-kuma-tags", "x-request-id", "content-length", "x-forwarded-client-cert", "x", "");
const headers = fc.array(
  fc.record({ key: headerName, value: fc.string({ maxLength: 20 }), rawValue: fc.oneof(fc.constant(Buffer.alloc(0)), fc.string({ maxLength: 30 }).map((s) => Buffer.from(s))) }),
  { maxLength: 6 },
);
const message = fc.oneof(
  fc.record({
    phase: fc.constantFrom(...PHASES, undefined),
    headers,
    body: fc.uint8Array({ maxLength: 16 }),
    endOfStream: fc.boolean(),
    observabilityMode: fc.constantFrom(false, false, false, false, true),
  }).map(({ phase, headers: h, body, endOfStream, observabilityMode }) => {
    const content =
      phase === undefined ? undefined
      : phase.endsWith("Headers") ? { headers: { headers: h }, endOfStream }
      : phase.endsWith("Body") ? { body, endOfStream }
      : { trailers: { headers: h } };
    return ProcessingRequest.fromPartial({ observabilityMode, ...(phase ? { request: { $case: phase, [phase]: content } as never } : {}) });
  }),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => {
    try {
      return ProcessingRequest.decode(bytes);
    } catch {
      return ProcessingRequest.fromPartial({}); // what grpc-js would refuse to hand us; an empty message instead
    }
  }),
);

test("properties › any message sequence gets a reply per message or stops at one INVALID_ARGUMENT, never a throw", (t) => {
  const deciders = [ALLOW_ALL, engine()];
  fc.assert(
    fc.property(fc.array(message, { minLength: 1, maxLength: 8 }), fc.constantFrom(0, 1), fc.constantFrom("inbound", "outbound"), (messages, d, direction) => {
      const processor = new RequestProcessor(deciders[d]!, direction as "inbound" | "outbound", { messageTimeoutMs: 200, maxMessageTimeoutMs: 0, explainHeader: true });
      for (const msg of messages) {
        const step = processor.handle(msg);
        if (step.type === "invalid") return step.message.length > 0; // the stream fails with this one status
        if (step.type === "ignore") {
          if (!msg.observabilityMode) return false;
          continue;
        }
        if (step.type !== "reply" || step.reply === undefined || step.delayMs < 0) return false;
      }
      return true;
    }),
    budget(2000),
  );
  t.pass();
});
