import type { z } from "zod";
import type { FileIntent, IntentContext, KeyIntent, KeyIntentContext } from "../call/intent.js";
import { ToolError } from "../errors.js";
import type { Power } from "../gate/powers.js";
import type { BuiltinTool, ToolContext, ToolOutput } from "../types.js";
import { paramsFromZod } from "./json-schema.js";

/** What a built-in tool states about itself; its declaration and argument parsing follow from it. */
export interface BuiltinDefinition<S extends z.ZodType> {
  name: string;
  description: string;
  snippet?: string;
  guidelines: string[];
  /** The arguments: `params` is derived from it (input side, so fields with defaults are optional). */
  schema: S;
  sequential?: boolean;
  confirm?: boolean;
  enabled?: boolean;
  powers?: readonly Power[];
  /** The timeout a call asks for in its own (unparsed) arguments, in ms. */
  callTimeoutMs?(args: Record<string, unknown>): number | undefined;
  /** The files a call will change, planned without changing them (BuiltinTool.intent). */
  intent?(args: z.output<S>, ctx: IntentContext): Promise<FileIntent[] | undefined>;
  /** The tree keys a call will write, planned without writing them (BuiltinTool.keyIntent). */
  keyIntent?(args: z.output<S>, ctx: KeyIntentContext): Promise<KeyIntent[] | undefined>;
  /** The tool awaits `ctx.intentDurable()` before its effect (BuiltinTool.awaitsIntent). */
  awaitsIntent?: true;
  /** Runs the tool on arguments already parsed (and typed) with `schema`. */
  execute(args: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/**
 * A built-in of the edit, shell or tree family: its declaration (`impl` runs the built-in of the
 * same name, `params` comes from the zod schema) and an `execute` that parses the arguments with
 * that same schema before handing them on typed.
 */
export function defineBuiltin<S extends z.ZodType>(def: BuiltinDefinition<S>): BuiltinTool {
  const { name, schema, execute } = def;
  return {
    ref: name,
    declaration: {
      name,
      description: def.description,
      ...(def.snippet !== undefined ? { snippet: def.snippet } : {}),
      guidelines: def.guidelines,
      params: paramsFromZod(schema),
      sequential: def.sequential ?? false,
      ...(def.confirm !== undefined ? { confirm: def.confirm } : {}),
      enabled: def.enabled ?? true,
      impl: { kind: "builtin", ref: name },
    },
    ...(def.powers !== undefined ? { powers: def.powers } : {}),
    ...(def.callTimeoutMs !== undefined ? { callTimeoutMs: def.callTimeoutMs } : {}),
    ...(def.intent !== undefined ? { intent: overArgs(def.intent, schema) } : {}),
    ...(def.keyIntent !== undefined ? { keyIntent: overArgs(def.keyIntent, schema) } : {}),
    ...(def.awaitsIntent ? { awaitsIntent: true as const } : {}),
    execute: async (args, ctx) => execute(parseArgs(schema, args, name), ctx),
  };
}

/**
 * A tool's intent (files it changes, keys it writes) over unparsed arguments: arguments its schema
 * refuses intend nothing (the call fails).
 */
function overArgs<S extends z.ZodType, C, I>(
  intent: (args: z.output<S>, ctx: C) => Promise<I[] | undefined>,
  schema: S,
): (args: Record<string, unknown>, ctx: C) => Promise<I[] | undefined> {
  return async function plannedChange(args, ctx) {
    const r = schema.safeParse(args);
    return r.success ? intent(r.data, ctx) : [];
  };
}

/** Parses arguments with the tool's schema (the runtime validated them already; this also types them). */
function parseArgs<S extends z.ZodType>(schema: S, args: unknown, tool: string): z.output<S> {
  const r = schema.safeParse(args);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`);
  throw new ToolError("invalid_args", `Invalid arguments for ${tool}: ${problems.join("; ")}.`, {
    details: { issues: r.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
  });
}
