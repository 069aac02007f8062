/**
 * JSON read without changing a number silently, and refused with where it is wrong. `JSON.parse`
 * turns `9007199254740993` into `…992` and says only "position 41"; the page's editors need the
 * line and column, and an integer beyond 2^53 either kept as its digits (an int64 in an import
 * line, which the tree holds exactly) or refused (inside a json value, which the server refuses
 * too: README "Integers are read exactly").
 */

/** A JSON value (api.ts's JsonValue; declared here so this file has no imports and runs in Node too). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export type ParseResult =
  | { ok: true; value: JsonValue }
  | { ok: false; error: string; line: number; column: number; offset: number };

export interface ParseOptions {
  /**
   * What to do with an integer literal beyond 2^53: `"refuse"` (the default: a json value cannot
   * hold it exactly) or `"string"` (kept as its decimal digits, the way the server sends an int64).
   */
  bigInt?: "refuse" | "string";
  /** The deepest nesting of arrays and objects (the server's limit). */
  maxDepth?: number;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const WS = /[ \t\n\r]*/y;
const LITERALS: Array<[string, JsonValue]> = [
  ["true", true],
  ["false", false],
  ["null", null],
];
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

class Failure extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** Parses `text` as one JSON document (RFC 8259). */
export function parseJson(text: string, options: ParseOptions = {}): ParseResult {
  const bigInt = options.bigInt ?? "refuse";
  const maxDepth = options.maxDepth ?? 256;
  let i = 0;

  const fail = (what: string, at = i): never => {
    throw new Failure(what, at);
  };
  const ws = () => {
    WS.lastIndex = i;
    WS.test(text);
    i = WS.lastIndex;
  };
  /** Steps over the closing character and answers `v`. */
  const close = <T>(v: T): T => {
    i++;
    return v;
  };
  const expect = (c: string) => {
    if (text[i] !== c) fail(text[i] === undefined ? `expected ${c}, the text ends` : `expected ${c}`);
    i++;
  };

  function value(depth: number): JsonValue {
    ws();
    const c = text[i];
    if (c === "{") return object(depth + 1);
    if (c === "[") return array(depth + 1);
    if (c === '"') return string();
    for (const [word, v] of LITERALS)
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return number();
    return fail(c === undefined ? "a value is missing, the text ends" : `unexpected ${JSON.stringify(c)}`);
  }

  function object(depth: number): JsonValue {
    if (depth > maxDepth) fail(`nested deeper than ${maxDepth} levels`);
    i++;
    const out: Record<string, JsonValue> = {};
    ws();
    if (text[i] === "}") return close(out);
    for (;;) {
      ws();
      if (text[i] !== '"') fail("expected a member name in double quotes");
      const at = i;
      const name = string();
      if (Object.hasOwn(out, name)) fail(`the member ${JSON.stringify(name)} is given twice`, at);
      ws();
      expect(":");
      out[name] = value(depth);
      ws();
      if (text[i] === ",") {
        i++;
        ws();
        if (text[i] === "}") fail("a comma before } (JSON has no trailing commas)");
        continue;
      }
      if (text[i] === "}") return close(out);
      fail(text[i] === undefined ? "the object is not closed with }" : "expected , or }");
    }
  }

  function array(depth: number): JsonValue {
    if (depth > maxDepth) fail(`nested deeper than ${maxDepth} levels`);
    i++;
    const out: JsonValue[] = [];
    ws();
    if (text[i] === "]") return close(out);
    for (;;) {
      out.push(value(depth));
      ws();
      if (text[i] === ",") {
        i++;
        ws();
        if (text[i] === "]") fail("a comma before ] (JSON has no trailing commas)");
        continue;
      }
      if (text[i] === "]") return close(out);
      fail(text[i] === undefined ? "the array is not closed with ]" : "expected , or ]");
    }
  }

  function string(): string {
    const start = i;
    i++;
    let out = "";
    for (;;) {
      const c = text[i];
      if (c === undefined) fail('the string is not closed with "', start);
      if (c === '"') return close(out);
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("\\u needs four hex digits");
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && ESCAPES[e] !== undefined) {
          out += ESCAPES[e];
          i += 2;
        } else fail(`unknown escape \\${e ?? ""}`);
        continue;
      }
      if ((c as string).charCodeAt(0) < 0x20)
        fail("a control character inside a string (write it as \\n, \\t…)");
      out += c;
      i++;
    }
  }

  function number(): JsonValue {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m || m[0] === "-") return fail("a number is malformed");
    const literal = m[0];
    const at = i;
    i = NUMBER.lastIndex;
    const n = Number(literal);
    if (!Number.isFinite(n)) fail(`${literal} is beyond what a number can hold`, at);
    if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) {
      if (bigInt === "string") return BigInt(literal).toString();
      fail(
        `the integer ${literal} is beyond 2^53 and would be rounded to ${String(n)}; write it as a string ("${literal}")`,
        at,
      );
    }
    return n;
  }

  try {
    const v = value(0);
    ws();
    if (i < text.length) fail("unexpected text after the JSON value");
    return { ok: true, value: v };
  } catch (err) {
    if (!(err instanceof Failure)) throw err;
    const { line, column } = lineColumn(text, err.offset);
    return {
      ok: false,
      error: `line ${line}, column ${column}: ${err.message}`,
      line,
      column,
      offset: err.offset,
    };
  }
}

/** The 1-based line and column of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let j = text.indexOf("\n"); j >= 0 && j < offset; j = text.indexOf("\n", j + 1)) {
    line++;
    start = j + 1;
  }
  return { line, column: offset - start + 1 };
}
