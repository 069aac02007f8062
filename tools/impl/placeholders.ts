import { PLACEHOLDER } from "../catalogue/declaration.js";
import { ToolError } from "../errors.js";

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

/** The properties of a params schema (JSON Schema), by name. */
function properties(params: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const props = params.properties;
  return props !== null && typeof props === "object"
    ? (props as Record<string, Record<string, unknown>>)
    : {};
}

/** Parameters whose schema says `"format": "path"`: their values must name a place in the workspace. */
export function pathParams(params: Record<string, unknown>): string[] {
  return Object.entries(properties(params))
    .filter(([, schema]) => schema !== null && typeof schema === "object" && schema.format === "path")
    .map(([name]) => name);
}

/**
 * Refuses option injection: a value that begins with `-` may not start an argv element (where the
 * program would read it as an option: `["sort", "{file}"]` with file `-o/tmp/x`), unless the
 * parameter's schema opts in with `"allowOptions": true`. An element that begins with text of its
 * own (`--file={file}`) is never read as an option because of a value, so it is not checked.
 */
export function checkOptionValues(
  argv: readonly string[],
  args: Record<string, unknown>,
  params: Record<string, unknown>,
): void {
  const props = properties(params);
  for (const template of argv) {
    // the placeholders the element starts with (`{a}{b}-x`: a and b) decide what its first character is
    const leading = /^(?:\{[A-Za-z_][A-Za-z0-9_]*\})+/.exec(template);
    if (!leading) continue;
    const filled = fillPlaceholders(leading[0], args);
    if (filled === undefined || !filled.startsWith("-")) continue;
    // the first placeholder with a non-empty value put the "-" there
    const names = [...leading[0].matchAll(PLACEHOLDER)].map((m) => m[1] as string);
    const name = names.find((n) => args[n] !== undefined && argText(args[n]) !== "");
    if (name === undefined || props[name]?.allowOptions === true) continue;
    throw new ToolError(
      "invalid_args",
      `${name} may not begin with "-": the program would read ${JSON.stringify(filled.slice(0, 80))} as an option. Give a value that does not start with "-" (for a file, ./-name).`,
      { details: { param: name } },
    );
  }
}
