/**
 * Request bodies read without changing a value silently. `JSON.parse` turns every number into a
 * double, so `9007199254740993` would become `…992` and `-9223372036854775809` (out of int64's
 * range) would become INT64_MIN. Here:
 *
 * - a body nested deeper than MAX_JSON_DEPTH (256) is refused with 400 before it is parsed;
 * - a body with a run of 16 digits or more (the shortest integer beyond 2^53 has 16) is read by a
 *   parser that keeps every integer literal that is not a safe integer as a bigint; every other
 *   body goes to fastify's own parser (JSON.parse), so the common case costs one regex test more;
 * - the tree's value exactness (tree/exact.ts: `exactValue`, `exactJson`, `exactInt64`) then stores a
 *   bigint as int64 exactly, refuses one out of int64's range, and one inside a json value (a double
 *   would answer it rounded): TREE_INEXACT_NUMBER, answered as 400 HTTP_INEXACT_NUMBER (server/errors.ts).
 */
import { ServerError } from "./errors.js";

/** The deepest nesting of arrays and objects a body may have. */
export const MAX_JSON_DEPTH = 256;

// Numbers up to 15 digits are always exact as doubles; a 16-digit run may not be.
const LONG_DIGITS = /[0-9]{16}/;

/**
 * Parses a JSON body: refuses nesting deeper than `maxDepth`, and keeps integers beyond 2^53 exact
 * (as bigints). `plain` parses the common case (fastify's own parser, so its errors stay the same).
 */
export function parseJsonBody(
  text: string,
  plain: (text: string) => unknown,
  maxDepth: number = MAX_JSON_DEPTH,
): unknown {
  checkDepth(text, maxDepth);
  if (!LONG_DIGITS.test(text)) return plain(text);
  return new ExactParser(text).document();
}

/** Refuses nesting deeper than `max`, counting only brackets outside strings. */
function checkDepth(text: string, max: number): void {
  // Fewer openers than the limit cannot nest deeper than it: skip the scan (the usual case).
  let openers = 0;
  for (let i = text.indexOf("["); i >= 0 && openers <= max; i = text.indexOf("[", i + 1)) openers++;
  for (let i = text.indexOf("{"); i >= 0 && openers <= max; i = text.indexOf("{", i + 1)) openers++;
  if (openers <= max) return;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max)
        throw new ServerError(
          "HTTP_JSON_TOO_DEEP",
          `the JSON body nests deeper than ${max} levels of arrays and objects: flatten it, or store the deep part as a string`,
          { limit: max },
        );
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const WS = /[ \t\n\r]*/y;

/** A small JSON parser (RFC 8259) that returns integers beyond 2^53 as bigints. Depth is checked first. */
class ExactParser {
  private i = 0;
  constructor(private readonly text: string) {}

  document(): unknown {
    const v = this.value();
    this.ws();
    if (this.i < this.text.length) this.fail("unexpected text after the JSON value");
    return v;
  }

  private fail(what: string): never {
    throw new ServerError("HTTP_INVALID_JSON", `the body is not valid JSON: ${what} at position ${this.i}`);
  }

  private ws(): void {
    WS.lastIndex = this.i;
    WS.test(this.text);
    this.i = WS.lastIndex;
  }

  private value(): unknown {
    this.ws();
    const c = this.text[this.i];
    switch (c) {
      case "{":
        return this.object();
      case "[":
        return this.array();
      case '"':
        return this.string();
      case "t":
        return this.word("true", true);
      case "f":
        return this.word("false", false);
      case "n":
        return this.word("null", null);
      default:
        return this.number();
    }
  }

  private word<T>(w: string, v: T): T {
    if (!this.text.startsWith(w, this.i)) this.fail("unexpected token");
    this.i += w.length;
    return v;
  }

  private number(): number | bigint {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.text);
    if (!m) this.fail(this.i >= this.text.length ? "unexpected end" : "unexpected token");
    const token = m[0];
    this.i = NUMBER.lastIndex;
    const n = Number(token);
    return m[1] !== undefined || m[2] !== undefined || Number.isSafeInteger(n) ? n : BigInt(token);
  }

  private string(): string {
    const start = this.i;
    let j = start + 1;
    for (;;) {
      const q = this.text.indexOf('"', j);
      if (q < 0) this.fail("unterminated string");
      let backslashes = 0;
      for (let k = q - 1; this.text.charCodeAt(k) === 0x5c; k--) backslashes++;
      if (backslashes % 2 === 0) {
        this.i = q + 1;
        break;
      }
      j = q + 1;
    }
    try {
      return JSON.parse(this.text.slice(start, this.i)) as string;
    } catch {
      this.i = start;
      return this.fail("invalid string");
    }
  }

  private array(): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.ws();
    if (this.text[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.text[this.i++];
      if (c === "]") return out;
      if (c !== ",") {
        this.i--;
        this.fail("expected , or ]");
      }
    }
  }

  private object(): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    this.ws();
    if (this.text[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.text[this.i] !== '"') this.fail("expected a string key");
      const key = this.string();
      this.ws();
      if (this.text[this.i++] !== ":") {
        this.i--;
        this.fail("expected :");
      }
      const v = this.value();
      // As fastify's parser: a key that would reach an object's prototype is refused.
      if (
        key === "__proto__" ||
        (key === "constructor" && typeof v === "object" && v !== null && "prototype" in v)
      )
        this.fail(`a key named ${key} is refused`);
      out[key] = v;
      this.ws();
      const c = this.text[this.i++];
      if (c === "}") return out;
      if (c !== ",") {
        this.i--;
        this.fail("expected , or }");
      }
    }
  }
}
