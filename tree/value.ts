import { TreeError } from "./errors.js";
import { type Json, type NodeKind, VALUE_KINDS, type ValueKind } from "./kinds.js";

export { type Json, type NodeKind, VALUE_KINDS, type ValueKind };

/** A typed value. int64 is a bigint so the whole signed 64-bit range is exact. */
export type TreeValue =
  | { kind: "int64"; value: bigint }
  | { kind: "float64"; value: number }
  | { kind: "bool"; value: boolean }
  | { kind: "char/utf8"; value: string }
  | { kind: "json"; value: Json };

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function isValueKind(kind: unknown): kind is ValueKind {
  return typeof kind === "string" && (VALUE_KINDS as readonly string[]).includes(kind);
}

/** Builders, so callers write `int64(5n)` rather than object literals. */
export const int64 = (value: bigint | number): TreeValue =>
  checkValue({ kind: "int64", value: BigInt(value) });
export const float64 = (value: number): TreeValue => checkValue({ kind: "float64", value });
export const bool = (value: boolean): TreeValue => ({ kind: "bool", value });
export const str = (value: string): TreeValue => ({ kind: "char/utf8", value });
export const json = (value: Json): TreeValue => ({ kind: "json", value });
// (checkValue, run by every write, refuses a json value JSON cannot hold.)

/** Throws TREE_INVALID_VALUE unless `v` is a well-formed TreeValue. Returns it for chaining. */
export function checkValue(v: TreeValue): TreeValue {
  switch (v.kind) {
    case "int64":
      if (typeof v.value !== "bigint" || v.value < INT64_MIN || v.value > INT64_MAX)
        throw badValue(`int64 value out of range: ${String(v.value)}`);
      return v;
    case "float64":
      if (typeof v.value !== "number") throw badValue("a float64 value must be a number");
      return v;
    case "bool":
      if (typeof v.value !== "boolean") throw badValue("a bool value must be true or false");
      return v;
    case "char/utf8":
      if (typeof v.value !== "string") throw badValue("a char/utf8 value must be a string");
      if (!v.value.isWellFormed())
        throw badValue("a char/utf8 value must be well-formed Unicode (lone surrogate)");
      return v;
    case "json":
      checkJson(v.value, "value", new Set());
      return v;
    default:
      throw badValue(
        `unknown kind ${JSON.stringify((v as { kind: unknown }).kind)}; use one of ${VALUE_KINDS.join(", ")}`,
      );
  }
}

/** Refuses what JSON cannot hold exactly: undefined, bigint, functions, NaN/Infinity, cycles. */
function checkJson(v: unknown, at: string, seen: Set<object>): void {
  switch (typeof v) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(v))
        throw badValue(`a json value cannot hold ${v} (at ${at}); use null or a string`);
      return;
    case "object": {
      if (v === null) return;
      if (seen.has(v)) throw badValue(`a json value cannot be circular (at ${at})`);
      seen.add(v);
      if (Array.isArray(v)) {
        for (const [i, x] of v.entries()) checkJson(x, `${at}[${i}]`, seen);
      } else {
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null)
          throw badValue(`a json value holds only plain objects and arrays (at ${at})`);
        for (const [k, x] of Object.entries(v)) checkJson(x, `${at}.${k}`, seen);
      }
      seen.delete(v);
      return;
    }
    default:
      throw badValue(`a json value cannot hold ${v === undefined ? "undefined" : typeof v} (at ${at})`);
  }
}

/**
 * The JSON form of a value, used by export, HTTP and records: int64 as a number when it is a safe
 * integer and as a decimal string otherwise; float64 non-finite numbers as the strings
 * "NaN", "Infinity", "-Infinity".
 */
export function valueToJson(v: TreeValue): Json {
  switch (v.kind) {
    case "int64":
      return v.value >= BigInt(Number.MIN_SAFE_INTEGER) && v.value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(v.value)
        : v.value.toString();
    case "float64":
      if (Object.is(v.value, -0)) return "-0";
      return Number.isFinite(v.value) ? v.value : String(v.value);
    default:
      return v.value;
  }
}

/** Reads the JSON form of a value of a known kind (the inverse of valueToJson). */
export function valueFromJson(kind: unknown, raw: unknown): TreeValue {
  if (!isValueKind(kind))
    throw badValue(`unknown kind ${JSON.stringify(kind)}; use one of ${VALUE_KINDS.join(", ")}`);
  switch (kind) {
    case "int64": {
      if (typeof raw === "number" && Number.isSafeInteger(raw)) return int64(BigInt(raw));
      if (typeof raw === "string" && /^-?[0-9]+$/.test(raw)) return int64(BigInt(raw));
      throw badValue(`an int64 value must be an integer or a decimal string, got ${show(raw)}`);
    }
    case "float64": {
      if (typeof raw === "number") return float64(raw);
      if (raw === "NaN" || raw === "Infinity" || raw === "-Infinity" || raw === "-0")
        return float64(Number(raw));
      throw badValue(`a float64 value must be a number, got ${show(raw)}`);
    }
    case "bool":
      if (typeof raw === "boolean") return bool(raw);
      throw badValue(`a bool value must be true or false, got ${show(raw)}`);
    case "char/utf8":
      if (typeof raw === "string") return checkValue(str(raw));
      throw badValue(`a char/utf8 value must be a string, got ${show(raw)}`);
    case "json":
      if (raw === undefined) throw badValue("a json value is missing");
      return checkValue(json(raw as Json));
  }
}

/** Infers a kind from a plain JSON value: integer → int64, number → float64, and so on. */
export function inferValue(raw: Json): TreeValue {
  if (typeof raw === "number") return Number.isInteger(raw) ? int64(BigInt(raw)) : float64(raw);
  if (typeof raw === "boolean") return bool(raw);
  if (typeof raw === "string") return checkValue(str(raw));
  return checkValue(json(raw));
}

/**
 * Parses a CLI literal: `int:42`, `float:3.5`, `bool:true`, `string:any text`, `json:{"a":1}`.
 * `nil:` is the CLI's delete and is returned as `null`. Everything after the first ':' is kept.
 */
export function parseLiteral(literal: string): TreeValue | null {
  const colon = literal.indexOf(":");
  if (colon < 0) throw badLiteral(literal, "a literal is kind:value, e.g. int:42 or string:hello");
  const tag = literal.slice(0, colon);
  const body = literal.slice(colon + 1);
  switch (tag) {
    case "int":
    case "int64":
      if (!/^[-+]?[0-9]+$/.test(body)) throw badLiteral(literal, "int: takes a decimal integer");
      return int64(BigInt(body));
    case "float":
    case "float64": {
      const n = Number(body);
      if (body.trim() === "" || (Number.isNaN(n) && body !== "NaN"))
        throw badLiteral(literal, "float: takes a number");
      return float64(n);
    }
    case "bool":
      if (body !== "true" && body !== "false") throw badLiteral(literal, "bool: takes true or false");
      return bool(body === "true");
    case "string":
    case "str":
    case "char":
      return checkValue(str(body));
    case "json":
      try {
        return json(JSON.parse(body) as Json);
      } catch (err) {
        throw badLiteral(literal, `json: takes valid JSON (${(err as Error).message})`);
      }
    case "nil":
      return null;
    default:
      throw badLiteral(
        literal,
        `unknown literal kind '${tag}'; use int:, float:, bool:, string:, json: or nil:`,
      );
  }
}

/** The plain text of a value: integers in decimal, floats always with a point, json compact. */
export function formatValue(v: TreeValue): string {
  switch (v.kind) {
    case "int64":
      return v.value.toString();
    case "float64":
      return formatFloat(v.value);
    case "bool":
      return v.value ? "true" : "false";
    case "char/utf8":
      return v.value;
    case "json":
      return JSON.stringify(v.value);
  }
}

function formatFloat(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const s = String(n);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

/** Byte size of a value as stored, for the size limit. */
export function valueSize(v: TreeValue): number {
  switch (v.kind) {
    case "char/utf8":
      return Buffer.byteLength(v.value, "utf8");
    case "json":
      return Buffer.byteLength(JSON.stringify(v.value), "utf8");
    default:
      return 8;
  }
}

function show(raw: unknown): string {
  const s = typeof raw === "string" ? JSON.stringify(raw) : String(raw);
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

function badValue(message: string): TreeError {
  return new TreeError("TREE_INVALID_VALUE", message);
}

function badLiteral(literal: string, why: string): TreeError {
  return new TreeError("TREE_INVALID_VALUE", `invalid literal ${show(literal)}: ${why}`);
}
