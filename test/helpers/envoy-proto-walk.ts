// Walks a parsed YAML/JSON value against a protobufjs message type the way Envoy's strict config loader reads
// it (proto3 JSON mapping, unknown fields are errors): resolves Any by its @type, knows the well-known types,
// enums by name, oneofs, and PGV `required` messages. Reports every problem with its path.
import protobuf from "protobufjs";
import { lookupMessage } from "./envoy-protos.js";

export interface Problem {
  path: string;
  message: string;
}

export interface WalkResult {
  problems: Problem[];
  /** Every `@type` resolved, with where it was. */
  anyTypes: Array<{ path: string; type: string }>;
  /** Fields marked deprecated in the protos that the config sets. */
  deprecated: string[];
}

const TYPE_URL_PREFIX = "type.googleapis.com/";
const DURATION = /^-?\d+(\.\d{1,9})?s$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const WRAPPERS: Record<string, string> = {
  "google.protobuf.DoubleValue": "double",
  "google.protobuf.FloatValue": "float",
  "google.protobuf.Int64Value": "int64",
  "google.protobuf.UInt64Value": "uint64",
  "google.protobuf.Int32Value": "int32",
  "google.protobuf.UInt32Value": "uint32",
  "google.protobuf.BoolValue": "bool",
  "google.protobuf.StringValue": "string",
  "google.protobuf.BytesValue": "bytes",
};
/** Well-known types whose JSON form is not an object of fields (inside Any they sit under "value"). */
const SPECIAL_JSON = new Set([...Object.keys(WRAPPERS), "google.protobuf.Duration", "google.protobuf.Timestamp", "google.protobuf.FieldMask", "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return Array.isArray(value) ? "a list" : value === null ? "null" : typeof value;
}

class Walker {
  readonly result: WalkResult = { problems: [], anyTypes: [], deprecated: [] };

  problem(path: string, message: string): void {
    this.result.problems.push({ path: path || "(root)", message });
  }

  message(value: unknown, type: protobuf.Type, path: string): void {
    const name = type.fullName.replace(/^\./, "");
    if (name === "google.protobuf.Any") return this.any(value, path);
    if (SPECIAL_JSON.has(name)) return this.wellKnown(value, name, path);
    if (!isObject(value)) return this.problem(path, `expected an object for ${name}, got ${describe(value)}`);

    const byName = new Map<string, protobuf.Field>();
    for (const field of type.fieldsArray) {
      byName.set(field.name, field);
      byName.set(jsonName(field.name), field);
    }
    const seen = new Set<protobuf.Field>();
    for (const [key, fieldValue] of Object.entries(value)) {
      const field = byName.get(key);
      const at = path ? `${path}.${key}` : key;
      if (!field) {
        this.problem(at, `unknown field of ${name}`);
        continue;
      }
      if (seen.has(field)) this.problem(at, `${field.name} given twice (snake_case and camelCase)`);
      seen.add(field);
      if (field.options?.deprecated === true) this.result.deprecated.push(at);
      this.field(fieldValue, field, at);
    }
    for (const oneof of type.oneofsArray) {
      const set = oneof.fieldsArray.filter((f) => seen.has(f));
      if (set.length > 1) this.problem(path, `oneof ${oneof.name}: only one of ${set.map((f) => f.name).join(", ")} may be set`);
      if (set.length === 0 && oneof.options?.["(validate.required)"] === true) {
        this.problem(path, `oneof ${oneof.name}: one of ${oneof.fieldsArray.map((f) => f.name).join(", ")} is required by ${name}`);
      }
    }
    for (const field of type.fieldsArray) {
      // PGV `required` on a oneof member only applies when that member is the one chosen.
      if (!field.partOf && field.options?.["(validate.rules).message.required"] === true && !seen.has(field)) {
        this.problem(path ? `${path}.${field.name}` : field.name, `required by ${name}`);
      }
    }
  }

  field(value: unknown, field: protobuf.Field, path: string): void {
    if (field instanceof protobuf.MapField) {
      if (!isObject(value)) return this.problem(path, `expected a map, got ${describe(value)}`);
      for (const [k, v] of Object.entries(value)) this.single(v, field, `${path}[${JSON.stringify(k)}]`);
      return;
    }
    if (field.repeated) {
      if (!Array.isArray(value)) return this.problem(path, `expected a list, got ${describe(value)}`);
      value.forEach((v, i) => this.single(v, field, `${path}[${i}]`));
      return;
    }
    this.single(value, field, path);
  }

  single(value: unknown, field: protobuf.Field, path: string): void {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) return this.message(value, resolved, path);
    if (resolved instanceof protobuf.Enum) return this.enumValue(value, resolved, path);
    this.scalar(value, field.type, path);
  }

  enumValue(value: unknown, type: protobuf.Enum, path: string): void {
    if (typeof value === "string" && value in type.values) return;
    if (typeof value === "number" && Object.values(type.values).includes(value)) return;
    this.problem(path, `not a value of enum ${type.name}: ${JSON.stringify(value)} (one of ${Object.keys(type.values).join(", ")})`);
  }

  scalar(value: unknown, scalarType: string, path: string): void {
    const ok = (() => {
      switch (scalarType) {
        case "string":
          return typeof value === "string";
        case "bytes":
          return typeof value === "string" && /^[A-Za-z0-9+/_-]*=*$/.test(value);
        case "bool":
          return typeof value === "boolean";
        case "double":
        case "float":
          return typeof value === "number" || (typeof value === "string" && /^(-?\d+(\.\d+)?([eE][-+]?\d+)?|NaN|-?Infinity)$/.test(value));
        default: {
          const unsigned = scalarType.startsWith("u") || scalarType.startsWith("fixed");
          const text = typeof value === "number" ? String(value) : typeof value === "string" ? value : "";
          return (typeof value === "number" || typeof value === "string") && (unsigned ? /^\d+$/ : /^-?\d+$/).test(text);
        }
      }
    })();
    if (!ok) this.problem(path, `expected ${scalarType}, got ${JSON.stringify(value)}`);
  }

  wellKnown(value: unknown, name: string, path: string): void {
    if (name === "google.protobuf.Duration") {
      if (typeof value !== "string" || !DURATION.test(value)) this.problem(path, `expected a Duration like "0.2s", got ${JSON.stringify(value)}`);
    } else if (name === "google.protobuf.Timestamp") {
      if (typeof value !== "string" || !TIMESTAMP.test(value)) this.problem(path, `expected an RFC 3339 Timestamp, got ${JSON.stringify(value)}`);
    } else if (name === "google.protobuf.FieldMask") {
      if (typeof value !== "string") this.problem(path, `expected a FieldMask string, got ${describe(value)}`);
    } else if (name === "google.protobuf.Struct") {
      if (!isObject(value)) this.problem(path, `expected an object (Struct), got ${describe(value)}`);
    } else if (name === "google.protobuf.ListValue") {
      if (!Array.isArray(value)) this.problem(path, `expected a list (ListValue), got ${describe(value)}`);
    } else if (name in WRAPPERS) {
      this.scalar(value, WRAPPERS[name]!, path);
    } // google.protobuf.Value: any JSON
  }

  any(value: unknown, path: string): void {
    if (!isObject(value)) return this.problem(path, `expected an Any object with "@type", got ${describe(value)}`);
    const typeUrl = value["@type"];
    if (typeof typeUrl !== "string") return this.problem(path, `Any without "@type"`);
    const at = `${path}.@type`;
    if (!typeUrl.startsWith(TYPE_URL_PREFIX)) return this.problem(at, `expected ${TYPE_URL_PREFIX}<type>, got ${typeUrl}`);
    const typeName = typeUrl.slice(TYPE_URL_PREFIX.length);
    const type = lookupMessage(typeName);
    if (!type) return this.problem(at, `unresolved type ${typeName} (not in the loaded Envoy protos)`);
    this.result.anyTypes.push({ path, type: typeName });
    const { "@type": _, ...rest } = value;
    if (SPECIAL_JSON.has(typeName)) {
      const extra = Object.keys(rest).filter((k) => k !== "value");
      for (const k of extra) this.problem(`${path}.${k}`, `unknown field of ${typeName} in Any (expected only "value")`);
      if (!("value" in rest)) return this.problem(path, `${typeName} in Any needs "value"`);
      return this.wellKnown(rest.value, typeName, `${path}.value`);
    }
    this.message(rest, type, path);
  }
}

/** Walks `value` as a `typeName` message; an unknown type name is itself a problem. */
export function walkMessage(value: unknown, typeName: string): WalkResult {
  const walker = new Walker();
  const type = lookupMessage(typeName);
  if (!type) walker.problem("", `unknown message type ${typeName}`);
  else walker.message(value, type, "");
  return walker.result;
}
