/**
 * Whether a field of an upstream's form asks for a secret. MCP forms must never ask for passwords,
 * API keys, access tokens or payment credentials (those go through the server's own sign-in), so
 * byteseek does not put such a form to a host's person (mcp/host-elicit.ts).
 *
 * A field is read three ways: a schema hint that marks a secret (`format: "password"`,
 * `writeOnly: true`, `x-secret` / `x-sensitive`), and the words of its name, title and description.
 * Words count only where a person could type a secret: a boolean or a choice from a list (`enum`,
 * `oneOf`, `anyOf`, `const`) carries none, and a number carries only a numeric one (a PIN, a card's
 * number or CVV, a one-time code), never a count of tokens. So `tokens_count` (an integer) or
 * `max_tokens` is not a secret, while `apiKey`, a field titled "API token" or one described as
 * "your password" is.
 *
 * The hints are read on the form as byteseek holds it: the MCP SDK's client refuses an upstream's
 * form with `format: "password"` and drops keywords the spec's form lacks (`writeOnly`) before
 * byteseek sees it, so for an upstream's form the words are what usually decide.
 */

/** Hints a schema gives that its field holds a secret, each with how it is said. */
const HINTS: Array<[string, (field: Record<string, unknown>) => boolean]> = [
  ['format: "password"', (f) => typeof f.format === "string" && f.format.toLowerCase() === "password"],
  ["writeOnly: true", (f) => f.writeOnly === true],
  ["x-secret: true", (f) => f["x-secret"] === true],
  ["x-sensitive: true", (f) => f["x-sensitive"] === true],
];

/** Secrets a number can hold. */
const NUMERIC =
  /\b(pin|cvv2?|cvc|passcode|otp|totp|ssn|(card|iban|social security) number|(one time|verification|security|auth|authentication|2 ?fa|mfa) code)\b/;

/** Secrets a text field can hold (besides the numeric ones), with token counted apart. */
const TEXTUAL =
  /\b(passwords?|passwd|passphrases?|pwd|secrets?|credentials?|bearer|api ?keys?|(private|secret|access|signing|encryption|ssh|license|client) keys?|(seed|recovery|mnemonic) phrase|mnemonic|(session|auth) cookie|credit card|iban)\b/;

/** A token that is one (an access token, "your token"), not a count of them. */
const TOKEN = /\btokens?\b/;
/**
 * Tokens counted, the counting word right beside them ("max tokens", "token budget", "number of
 * tokens"): only these are taken out before looking for a token, so "your access token (max 40
 * characters)" still asks for one.
 */
const COUNTED_TOKENS =
  /\b(max|maximum|min|minimum|total|number of|count of|output|input)( output| input)? tokens?\b|\btokens? (count|counts|budget|usage|limit|limits|used|per \w+|length)\b|\bhow many tokens\b/g;

/** What marks `field` (named `name`) as asking for a secret, said for a person, or undefined. */
export function secretSign(name: string, field: unknown): string | undefined {
  const f = field !== null && typeof field === "object" ? (field as Record<string, unknown>) : {};
  for (const [said, marks] of HINTS) if (marks(f)) return `its schema says ${said}`;
  if (isChoice(f)) return undefined;
  const numeric = f.type === "number" || f.type === "integer";
  for (const [part, text] of [
    ["name", name],
    ["title", f.title],
    ["description", f.description],
  ] as const) {
    if (typeof text !== "string") continue;
    const words = wordsOf(text);
    if (NUMERIC.test(words)) return `its ${part} asks for one`;
    if (numeric) continue;
    if (TEXTUAL.test(words) || TOKEN.test(words.replace(COUNTED_TOKENS, " ")))
      return `its ${part} asks for one`;
  }
  return undefined;
}

/** A field whose value is picked, never typed: a boolean, or one of a list. */
function isChoice(f: Record<string, unknown>): boolean {
  if (f.type === "boolean") return true;
  if ("enum" in f || "oneOf" in f || "anyOf" in f || "const" in f) return true;
  // a multi-select: an array of picked items
  const items = f.items as Record<string, unknown> | undefined;
  return (
    f.type === "array" && items !== undefined && ("enum" in items || "anyOf" in items || "oneOf" in items)
  );
}

/** Lower-case words of a name or text, space-separated: `apiKey`, `API_KEY`, `api-key` read "api key". */
function wordsOf(text: string): string {
  return text
    .slice(0, 2000)
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .join(" ");
}
