// The one JSON-object test the inject code uses on parsed YAML/JSON (not arrays, not null).
export type JsonObject = Record<string, unknown>;

export function isObject(x: unknown): x is JsonObject {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
