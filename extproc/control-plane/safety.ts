// Hostile-input guards for the control plane's request bodies: size limit, strict UTF-8, and a YAML
// parse that refuses aliases, deep nesting, several documents and oversized node counts with a clear 400.
import type { IncomingMessage } from "node:http";
import { isAlias, isScalar, visit } from "yaml";
import { parseDocumentBounded, YAML_LIMITS, yamlLimitViolation } from "../policy/documents/yaml-limits.js";
import { badRequest, payloadTooLarge } from "./problems.js";

export interface BodyLimits {
  /** Largest accepted request body. @default 1 MiB */
  maxBodyBytes: number;
  /** Deepest accepted nesting of mappings/sequences. @default 64 */
  maxDepth: number;
  /** Most accepted mapping/sequence/scalar nodes in one JSON document. @default 10000 */
  maxNodes: number;
  /**
   * Most accepted nodes in one YAML (not JSON) document. The YAML library costs ~30 µs a node on this class of
   * machine, so 2 500 nodes keep any body up to maxBodyBytes under ~100 ms; JSON bodies (JSON.parse) allow more.
   * @default 2500
   */
  maxYamlNodes: number;
}

export const DEFAULT_BODY_LIMITS: BodyLimits = { maxBodyBytes: 1 << 20, maxDepth: YAML_LIMITS.maxDepth, maxNodes: 10_000, maxYamlNodes: 2500 };

/** Reads the body, failing with 413 as soon as it exceeds the limit (the rest is not buffered). */
export function readBodyLimited(req: IncomingMessage, maxBodyBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > maxBodyBytes) return reject(payloadTooLarge(maxBodyBytes));
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        req.off("data", onData);
        req.resume();
        reject(payloadTooLarge(maxBodyBytes));
      } else chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function decodeUtf8(body: Buffer): string {
  try {
    return STRICT_UTF8.decode(body);
  } catch {
    throw badRequest("request body is not valid UTF-8");
  }
}

function measure(value: unknown, depth: number, limits: BodyLimits, count: { nodes: number }): void {
  if (++count.nodes > limits.maxNodes) throw badRequest(`document has more than ${limits.maxNodes} nodes`);
  if (value === null || typeof value !== "object") return;
  if (depth > limits.maxDepth) throw badRequest(`document nests deeper than ${limits.maxDepth} levels`);
  for (const child of Array.isArray(value) ? value : Object.values(value)) measure(child, depth + 1, limits, count);
}

/**
 * A JSON object body read with JSON.parse: what API clients send, and many times faster than the YAML
 * parser on the same bytes. Undefined when the text is not a JSON object (it is then read as YAML).
 */
function parseJsonObject(text: string): unknown {
  if (!/^\s*\{/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Parses one YAML (or JSON) document under the limits; every refusal is a 400 ApiError naming the cause. */
export function parseYamlSafe(text: string, limits: BodyLimits = DEFAULT_BODY_LIMITS): unknown {
  if (text.trim() === "") throw badRequest("request body is empty: expected a YAML or JSON resource");
  // Checked before parsing, for every syntax (flow and block): the parser is quadratic in depth and parse time
  // grows with the node count, so a 1 MiB body of tiny or deeply nested entries must not reach it.
  const json = parseJsonObject(text);
  if (json !== undefined) {
    measure(json, 0, limits, { nodes: 0 });
    return json;
  }
  const tooComplex = yamlLimitViolation(text, { ...limits, maxNodes: Math.min(limits.maxNodes, limits.maxYamlNodes) });
  if (tooComplex) throw badRequest(`document ${tooComplex}`);
  let doc;
  try {
    // uniqueKeys is checked below in linear time: the library's check is quadratic in the keys of a mapping.
    doc = parseDocumentBounded(text, { prettyErrors: false, uniqueKeys: false }, limits);
  } catch (err) {
    throw badRequest(`request body is not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (doc.errors.length) throw badRequest(`request body is not valid YAML or JSON: ${doc.errors[0]!.message}`);
  let hasAlias = false;
  let duplicate: string | undefined;
  visit(doc, {
    Alias: () => {
      hasAlias = true;
      return visit.BREAK;
    },
    Map: (_key, map) => {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const k = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(k)) {
          duplicate = k;
          return visit.BREAK;
        }
        seen.add(k);
      }
      return undefined;
    },
  });
  if (hasAlias || isAlias(doc.contents)) throw badRequest("YAML aliases (*name) are not accepted in resources");
  if (duplicate !== undefined) throw badRequest(`request body is not valid YAML or JSON: map keys must be unique (${JSON.stringify(duplicate)} repeats)`);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 0 });
  } catch (err) {
    throw badRequest(`request body could not be read: ${(err as Error).message}`);
  }
  measure(value, 0, limits, { nodes: 0 });
  return value;
}
