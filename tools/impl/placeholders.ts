import { PLACEHOLDER } from "../declaration.js";

/** The text of an argument value: strings as they are, anything else as JSON. */
export function argText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? "");
}

/**
 * Replaces `{param}` placeholders in one template. An element that is exactly `{param}` becomes
 * the whole value (or `undefined` when the argument is absent, so argv can drop it); inside a
 * longer text each placeholder becomes the value's text (empty when absent). Nothing is ever
 * split or re-parsed: the result is one string, whatever it contains.
 */
export function fillPlaceholders(
  template: string,
  args: Record<string, unknown>,
  encode: (s: string) => string = (s) => s,
): string | undefined {
  const whole = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(template);
  if (whole) {
    const value = args[whole[1] as string];
    return value === undefined ? undefined : encode(argText(value));
  }
  return template.replace(PLACEHOLDER, function fill(_m, name: string) {
    const value = args[name];
    return value === undefined ? "" : encode(argText(value));
  });
}
