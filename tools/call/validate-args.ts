/** The pipeline's validate stage: the model's arguments checked against the declaration's `params`. */
import { compileParams } from "../catalogue/declaration.js";
import { argProblems, signatureOf } from "../catalogue/json-schema.js";
import type { ToolResult } from "../types.js";
import { failure } from "./results.js";

/** The arguments as an object the declaration's schema accepts (defaults filled in), or the `arg` result refusing them. */
export function validateArgs(
  name: string,
  args: unknown,
  params: Record<string, unknown>,
): { args: Record<string, unknown> } | { refusal: ToolResult } {
  const signature = signatureOf(name, params);
  if (args === undefined || args === null) args = {};
  if (typeof args !== "object" || Array.isArray(args))
    return {
      refusal: failure(
        "arg",
        "invalid_args",
        `${name} takes an object of named arguments. Signature: ${signature}`,
        { signature },
      ),
    };
  const validated = structuredClone(args) as Record<string, unknown>;
  const validate = compileParams(params);
  if (validate(validated)) return { args: validated };
  const problems = argProblems(validate.errors, validated);
  const lines = problems.map(
    (p) =>
      `- ${p.field === "/" ? "the arguments" : p.field.slice(1).replaceAll("/", ".")}: expected ${p.expected}${p.got ? `, got ${p.got}` : ""}`,
  );
  return {
    refusal: failure(
      "arg",
      "invalid_args",
      `Invalid arguments for ${name}:\n${lines.join("\n")}\nSignature: ${signature}\nFix the arguments and call again.`,
      { problems, signature },
    ),
  };
}
