/**
 * Text from a tool call, a declaration or an upstream server shown to a person (a terminal, a
 * listing, the web page, an MCP host) must not be able to forge what the person reads: a carriage
 * return or an escape sequence rewriting the line above, a backspace eating "[y/N]", a bidi
 * override reversing a command. `printable` neutralises them by spelling each one out (`\r`,
 * `\x1b`, `\u202e`), so the value is still readable and nothing it holds acts on the display. This
 * module has no dependencies: the web page runs it too.
 */

// C0 controls, DEL, C1 controls; the Arabic letter mark, LRM/RLM, line/paragraph separators,
// bidi embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069)
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b" };

export interface PrintableOptions {
  /** Keep line feeds and tabs (a diff, a multi-line description): they cannot rewrite what came before. */
  lines?: boolean;
}

/** `text` with every control character, escape sequence and bidi control spelled out. */
export function printable(text: string, options: PrintableOptions = {}): string {
  return text.replace(UNSAFE, (c) => {
    if (options.lines && (c === "\n" || c === "\t")) return c;
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** A value shown on one line: strings as they are, anything else as JSON, neutralised either way. */
export function printableValue(value: unknown): string {
  return printable(typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)));
}
