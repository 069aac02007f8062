import type { z } from "zod";
import { ToolError } from "./errors.js";
import { paramsFromZod } from "./json-schema.js";
import type { ToolDeclarationInput } from "./types.js";

/** What a built-in tool states about itself; the rest of its declaration follows from it. */
export interface DeclareOptions {
  name: string;
  description: string;
  snippet?: string;
  guidelines: string[];
  /** The arguments: `params` is derived from it (input side, so fields with defaults are optional). */
  schema: z.ZodType;
  sequential?: boolean;
  confirm?: boolean;
  enabled?: boolean;
}

/**
 * The declaration every built-in family (edit, shell, tree) ships: `impl` runs the built-in of
 * the same name, `params` comes from the zod schema the tool also parses its arguments with.
 */
export function declareBuiltin(options: DeclareOptions): ToolDeclarationInput {
  return {
    name: options.name,
    description: options.description,
    ...(options.snippet !== undefined ? { snippet: options.snippet } : {}),
    guidelines: options.guidelines,
    params: paramsFromZod(options.schema),
    sequential: options.sequential ?? false,
    ...(options.confirm !== undefined ? { confirm: options.confirm } : {}),
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
