import { z } from "zod";
import { ToolError } from "../errors.js";
import type { ToolDeclarationInput } from "../types.js";

export interface DeclareOptions {
  name: string;
  description: string;
  snippet: string;
  guidelines: string[];
  schema: z.ZodType;
  sequential?: boolean;
  enabled?: boolean;
}

/**
 * A built-in tool's declaration, its `params` derived from the zod schema (input side, so fields with
 * defaults are optional). The `$schema` URL is left out so any JSON Schema validator accepts it.
 */
export function declareBuiltin(options: DeclareOptions): ToolDeclarationInput {
  const { $schema: _drop, ...params } = z.toJSONSchema(options.schema, { io: "input" }) as Record<
    string,
    unknown
  >;
  return {
    name: options.name,
    description: options.description,
    snippet: options.snippet,
    guidelines: options.guidelines,
    params,
    sequential: options.sequential ?? false,
    enabled: options.enabled ?? true,
    impl: { kind: "builtin", ref: options.name },
  };
}

/** Parses arguments with the tool's schema (the runtime validated them already; this also types them). */
export function parseArgs<S extends z.ZodType>(schema: S, args: unknown, tool: string): z.output<S> {
  const r = schema.safeParse(args);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`);
  throw new ToolError("invalid_args", `Invalid arguments for ${tool}: ${problems.join("; ")}.`, {
    details: { issues: r.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
  });
}
