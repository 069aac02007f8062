/**
 * Which fields of an upstream's form ask for a secret (mcp/form-secrets.ts): a form with one is
 * never put to an MCP host's person. Read from the field's name, title, description and schema
 * hints, with the fields that only look alike (counts of tokens, choices, booleans) left alone.
 */
import { describe, expect, it } from "vitest";
import { secretSign } from "../../mcp/form-secrets.js";

const text = (extra: Record<string, unknown> = {}) => ({ type: "string", ...extra });
const int = (extra: Record<string, unknown> = {}) => ({ type: "integer", ...extra });

/** [name, field, what gives it away]. */
const SECRETS: Array<[string, Record<string, unknown>, string]> = [
  ["password", text(), "its name asks for one"],
  ["userPassword", text(), "its name asks for one"],
  ["api_key", text(), "its name asks for one"],
  ["APIKey", text(), "its name asks for one"],
  ["apikey", text(), "its name asks for one"],
  ["token", text(), "its name asks for one"],
  ["access-token", text(), "its name asks for one"],
  ["client_secret", text(), "its name asks for one"],
  ["ssh_private_key", text(), "its name asks for one"],
  ["gh", text({ title: "GitHub API token" }), "its title asks for one"],
  ["value", text({ title: "Secret key" }), "its title asks for one"],
  ["login", text({ description: "Your password for the mail server" }), "its description asks for one"],
  ["words", text({ description: "The wallet's recovery phrase" }), "its description asks for one"],
  ["x", text({ format: "password" }), 'its schema says format: "password"'],
  ["note", text({ writeOnly: true }), "its schema says writeOnly: true"],
  ["field", text({ "x-secret": true }), "its schema says x-secret: true"],
  ["pin", int(), "its name asks for one"],
  ["code", int({ title: "CVV" }), "its title asks for one"],
  ["n", int({ description: "The one-time code we texted you" }), "its description asks for one"],
  ["card", text({ title: "Credit card number" }), "its title asks for one"],
  ["mfa", text({ title: "2FA code" }), "its title asks for one"],
  // no type said: read as text
  ["bearer", {}, "its name asks for one"],
  // a counting word elsewhere in the text does not hide a token asked for
  ["t", text({ title: "Your access token (max 40 characters)" }), "its title asks for one"],
  [
    "gh",
    text({ description: "A token with repo scope; its total length is 40" }),
    "its description asks for one",
  ],
];

/** [name, field]: fields that share a word with a secret and ask for none. */
const PLAIN: Array<[string, Record<string, unknown>]> = [
  ["tokens_count", int()],
  ["max_tokens", int()],
  ["token_limit", text()],
  ["tokens", int({ description: "How many tokens the answer may take" })],
  ["budget", text({ title: "Token budget" })],
  ["tokenizer", text()],
  ["keyboard_layout", text()],
  ["keyword", text()],
  ["sort_key", text()],
  ["passage", text({ title: "A passage to quote" })],
  ["name", text({ title: "Your name", minLength: 1 })],
  ["email", text({ format: "email" })],
  ["age", int({ minimum: 0 })],
  ["remember_password", { type: "boolean", title: "Remember my password" }],
  ["auth_method", text({ enum: ["password", "token", "api key"] })],
  ["scopes", { type: "array", items: { type: "string", enum: ["secret.read", "token.write"] } }],
  ["kind", text({ oneOf: [{ const: "api_key", title: "API key" }] })],
  ["pages", int({ title: "Number of pages" })],
  ["limit", text({ title: "Max tokens", description: "How many tokens the answer may use" })],
  ["cap", text({ description: "The token budget per day" })],
  ["password_length", int({ title: "Password length" })],
];

describe("secretSign", () => {
  it.each(SECRETS)("takes %s (%j) for a secret: %s", (name, field, sign) => {
    expect(secretSign(name, field)).toBe(sign);
  });

  it.each(PLAIN)("takes %s (%j) for no secret", (name, field) => {
    expect(secretSign(name, field)).toBeUndefined();
  });

  it("reads a schema hint on any field, and nothing from a field that is no object", () => {
    expect(secretSign("flag", { type: "boolean", writeOnly: true })).toBe("its schema says writeOnly: true");
    expect(secretSign("age", null)).toBeUndefined();
    expect(secretSign("password", "nonsense")).toBe("its name asks for one");
  });
});
