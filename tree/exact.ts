/**
 * Value exactness: reading a value whose numbers a JSON reader kept whole (an integer beyond 2^53
 * as a bigint: server/exact-json.ts parses request bodies so) into a `TreeValue` without changing
 * it silently. An int64 is kept exactly or refused out of its range (never clamped), an integer a
 * json value cannot hold (a double would answer it rounded) is refused naming where, and one
 * written with a fraction or exponent beyond 2^53 is refused rather than rounded into an int64.
 * Each refusal is TREE_INEXACT_NUMBER (the HTTP API answers it as 400 HTTP_INEXACT_NUMBER).
 */
import { TreeError } from "./errors.js";
import { INT64_MAX, INT64_MIN, inferValue, type Json, type TreeValue, valueFromJson } from "./value.js";

/** What to send instead of a number that cannot be kept. */
const HOW =
  'send it as a string ("…"), as {"kind":"int64","value":"…"} for an exact integer in int64\'s range, or as {"kind":"float64","value":…} if a rounded double is what you mean';

/** An int64 from a bigint literal: exact, or TREE_INEXACT_NUMBER when out of int64's range (never clamped). */
export function exactInt64(b: bigint, at = "the value"): bigint {
  if (b < INT64_MIN || b > INT64_MAX)
    throw new TreeError(
      "TREE_INEXACT_NUMBER",
      `${at} ${b} is out of int64's range (${INT64_MIN} to ${INT64_MAX}): nothing was stored; ${HOW}`,
      { value: b.toString() },
    );
  return b;
}

/** Refuses a number written with a fraction or exponent whose value is an integer beyond 2^53 (e.g. 9.007199254740993e15). */
export function checkInexactDouble(n: number, at = "the value"): void {
  if (Number.isInteger(n) && !Number.isSafeInteger(n))
    throw new TreeError(
      "TREE_INEXACT_NUMBER",
      `${at} ${n} is beyond 2^53 and written with a fraction or exponent, so it may not be the integer you wrote: ${HOW}`,
      { value: String(n) },
    );
}

/**
 * A json value with no bigint in it: an integer beyond 2^53 cannot be kept exactly inside json (a
 * double would answer it rounded, or in other digits), so it is refused, naming where.
 */
export function exactJson(raw: unknown, at = "value"): Json {
  if (typeof raw === "bigint")
    throw new TreeError(
      "TREE_INEXACT_NUMBER",
      `${raw} (at ${at}) is an integer beyond 2^53, which a json value cannot hold exactly: nothing was stored; ${HOW}`,
      { at, value: raw.toString() },
    );
  if (Array.isArray(raw)) {
    for (let i = 0; i < raw.length; i++) exactJson(raw[i], `${at}[${i}]`);
  } else if (typeof raw === "object" && raw !== null) {
    const o = raw as Record<string, unknown>;
    for (const k of Object.keys(o)) exactJson(o[k], `${at}.${k}`);
  }
  return raw as Json;
}

/**
 * A value read as `kind` or, without one, with its kind inferred (an integer → int64) — never
 * changed silently: an integer is kept exactly or refused.
 */
export function exactValue(kind: unknown, raw: unknown): TreeValue {
  if (kind === undefined) {
    if (typeof raw === "bigint") return { kind: "int64", value: exactInt64(raw) };
    if (typeof raw === "number") checkInexactDouble(raw);
    else if (typeof raw === "object" && raw !== null) return inferValue(exactJson(raw));
    return inferValue(raw as Json);
  }
  if (typeof raw === "bigint") {
    if (kind === "int64") return { kind: "int64", value: exactInt64(raw) };
    // A double was asked for: rounding is what float64 means.
    if (kind === "float64") return valueFromJson(kind, Number(raw));
  }
  if (kind === "json" && typeof raw === "object" && raw !== null) return valueFromJson(kind, exactJson(raw));
  return valueFromJson(kind, raw);
}
