import { z } from "zod";
import { IMPL_KINDS, ToolAnnotations } from "./declaration-parts.js";
import { createSchemaCompiler, type SchemaCompiler } from "./json-schema.js";

/** `family.verb`, lowercase: also a tree key segment and (dots mapped) a provider tool name. */
export const ToolName = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*$/, "a tool name is family.verb in lowercase, e.g. text.wc");

/** A placeholder: an argv element, env value or URL part `{param}` names a declared parameter. */
export const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const TimeoutMs = z
  .number()
  .int()
  .positive()
  .max(24 * 3600 * 1000)
  .describe("Milliseconds before the call is stopped; default: the policy's defaultTimeoutMs");

export const BuiltinImpl = z
  .object({
    kind: z.literal("builtin"),
    ref: z.string().min(1).describe("The built-in function, e.g. edit.replace"),
  })
  .strict();

export const ShellImpl = z
  .object({
    kind: z.literal("shell"),
    argv: z
      .array(z.string())
      .min(1)
      .describe("Program and arguments; `{param}` is replaced by the argument value, never by a shell"),
    cwd: z.string().min(1).optional().describe("Working directory, relative to the workspace"),
    env: z.record(z.string(), z.string()).optional().describe("Extra environment; values may be {param}"),
    timeoutMs: TimeoutMs.optional(),
  })
  .strict();

export const HttpImpl = z
  .object({
    kind: z.literal("http"),
    url: z.url({ protocol: /^https?$/ }).describe("http(s) URL; `{param}` in it is replaced, URL-encoded"),
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).default("POST"),
    headers: z.record(z.string(), z.string()).optional(),
    timeoutMs: TimeoutMs.optional(),
  })
  .strict();

export const LlmImpl = z
  .object({
    kind: z.literal("llm"),
    prompt: z
      .string()
      .startsWith("/")
      .describe("Tree key of the prompt text, e.g. /byteseek/prompt/summarize"),
    timeoutMs: TimeoutMs.optional(),
  })
  .strict();

export const McpImpl = z
  .object({
    kind: z.literal("mcp"),
    server: z.string().min(1).describe("The upstream server registered at /byteseek/mcp/<server>"),
    tool: z.string().min(1).describe("The tool's name upstream (before mapping to the tree's name rules)"),
  })
  .strict();

export const ToolImpl = z.discriminatedUnion("kind", [BuiltinImpl, ShellImpl, HttpImpl, LlmImpl, McpImpl]);
export type ToolImpl = z.infer<typeof ToolImpl>;
export type ImplKind = ToolImpl["kind"];
export { IMPL_KINDS, ToolAnnotations };

type ListedKind = (typeof IMPL_KINDS)[number];
/** `true` only when ToolImpl's kinds are exactly IMPL_KINDS: a kind added on one side alone fails here. */
export const IMPL_KINDS_MATCH: [ImplKind] extends [ListedKind]
  ? [ListedKind] extends [ImplKind]
    ? true
    : never
  : never = true;

// A memo of compiled schemas, shared by parsing and the runtime's validation: it holds no state
// a caller could observe, so one per process is harmless and saves compiling each schema twice.
const compiler: SchemaCompiler = createSchemaCompiler();

/** The compiled argument validator of a declaration's params (cached by schema text). */
export function compileParams(params: Record<string, unknown>) {
  return compiler.compile(params);
}

/** A JSON Schema of the arguments: an object schema that ajv compiles. */
export const ParamsSchema = z.record(z.string(), z.unknown()).superRefine(function checkParams(schema, ctx) {
  if (schema.type !== "object") {
    ctx.addIssue({ code: "custom", message: 'params must be an object schema: {"type": "object", …}' });
    return;
  }
  try {
    compiler.compile(schema);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: `params is not a valid JSON Schema: ${(err as Error).message}` });
  }
});

/** A tool declaration, as stored at `/byteseek/tools/<name>` (see DESIGN.md "Tools"). */
export const ToolDeclaration = z
  .object({
    name: ToolName,
    title: z.string().min(1).max(200).optional().describe("A human-readable name hosts show (MCP)"),
    description: z.string().min(1).max(8000),
    snippet: z
      .string()
      .min(1)
      .max(300)
      .regex(/^[^\n\r]*$/, "a snippet is one line")
      .optional()
      .describe("One line for the system prompt's tool list; without it the tool is not listed"),
    guidelines: z.array(z.string().min(1)).default([]).describe("Lines for the prompt's Guidelines section"),
    params: ParamsSchema,
    sequential: z.boolean().default(true).describe("Run one at a time within a run"),
    confirm: z.boolean().default(false).describe("Denied unless the call carries an approval"),
    enabled: z.boolean().default(true),
    timeoutMs: TimeoutMs.optional(),
    annotations: ToolAnnotations.optional().describe(
      "What the tool does, for MCP hosts; absent hints are derived from the impl",
    ),
    impl: ToolImpl,
  })
  .strict()
  .superRefine(function checkPlaceholders(decl, ctx) {
    const props = (decl.params.properties ?? {}) as Record<string, unknown>;
    const texts: Array<[string, string]> = [];
    if (decl.impl.kind === "shell") {
      decl.impl.argv.forEach((a, i) => {
        texts.push([`impl.argv.${i}`, a]);
      });
      for (const [k, v] of Object.entries(decl.impl.env ?? {})) texts.push([`impl.env.${k}`, v]);
      if (decl.impl.cwd) texts.push(["impl.cwd", decl.impl.cwd]);
    } else if (decl.impl.kind === "http") texts.push(["impl.url", decl.impl.url]);
    for (const [where, text] of texts) {
      for (const m of text.matchAll(PLACEHOLDER)) {
        const param = m[1] as string;
        if (!Object.hasOwn(props, param))
          ctx.addIssue({
            code: "custom",
            path: where.split("."),
            message: `placeholder {${param}} names no parameter in params.properties`,
          });
      }
    }
  });

/** A declaration with its defaults applied. */
export type ToolDeclaration = z.infer<typeof ToolDeclaration>;

export type ParseDeclarationResult =
  | { ok: true; declaration: ToolDeclaration }
  | { ok: false; problems: string[] };

/**
 * Validates a declaration. With `builtins`, a `builtin` impl must name one of them. With `name`
 * (the key it was read from), the declared name must match it. Never throws.
 */
export function parseDeclaration(
  json: unknown,
  // Only the names count (so this file needs nothing of types.ts, which imports it).
  options: { builtins?: ReadonlyMap<string, unknown>; name?: string } = {},
): ParseDeclarationResult {
  const parsed = ToolDeclaration.safeParse(json);
  if (!parsed.success) return { ok: false, problems: zodProblems(parsed.error, ToolDeclaration) };
  const decl = parsed.data;
  const problems: string[] = [];
  if (options.name !== undefined && decl.name !== options.name)
    problems.push(`name: "${decl.name}" does not match its key (…/tools/${options.name})`);
  if (options.builtins && decl.impl.kind === "builtin" && !options.builtins.has(decl.impl.ref))
    problems.push(
      `impl.ref: no built-in "${decl.impl.ref}" is shipped; known: ${[...options.builtins.keys()].sort().join(", ")}`,
    );
  return problems.length ? { ok: false, problems } : { ok: true, declaration: decl };
}

/**
 * One line per issue, each naming the field and what it expects: `impl.argv: Too small: expected
 * array to have >=1 items`, `description: missing (a string)`, `grantz: unknown field (did you mean
 * grants?); the fields are …`. With `schema` (the one that failed), an unknown field's line lists
 * the fields that are known there.
 */
export function zodProblems(error: z.ZodError, schema?: z.ZodType): string[] {
  return error.issues.flatMap(function problem(issue): string[] {
    const where = issue.path.length ? issue.path.map(String).join(".") : "(root)";
    if (issue.code === "unrecognized_keys") {
      const known = schema ? fieldsAt(schema, issue.path) : undefined;
      return issue.keys.map(function unknownField(key) {
        const at = issue.path.length ? `${where}.${key}` : key;
        const near = known ? nearest(key, known.names) : undefined;
        const list = known?.exact ? `; the fields are ${known.names.join(", ")}` : "";
        return `${at}: unknown field${near ? ` (did you mean ${near}?)` : ""}${list}`;
      });
    }
    if (issue.code === "invalid_type" && / received undefined$/.test(issue.message))
      return [`${where}: missing (expected ${issue.expected})`];
    return [`${where}: ${issue.message}`];
  });
}

/** The zod internals `fieldsAt` walks: every schema has `_zod.def` with its `type`. */
interface SchemaDef {
  type: string;
  innerType?: unknown;
  in?: unknown;
  shape?: Record<string, unknown>;
  element?: unknown;
  valueType?: unknown;
  options?: unknown[];
}

const defOf = (schema: unknown): SchemaDef | undefined =>
  (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;

/**
 * The field names of the object at `path` in `schema`; for a union of objects, every option's
 * (not `exact`: which option the value meant is not known here).
 */
function fieldsAt(
  schema: unknown,
  path: readonly PropertyKey[],
): { names: string[]; exact: boolean } | undefined {
  let s = schema;
  let i = 0;
  for (let steps = 0; steps < 64; steps++) {
    const def = defOf(s);
    if (def === undefined) return undefined;
    if (def.innerType !== undefined) s = def.innerType;
    else if (def.type === "pipe") s = def.in;
    else if (def.type === "object" && def.shape) {
      if (i === path.length) return { names: Object.keys(def.shape), exact: true };
      s = def.shape[String(path[i++])];
    } else if (def.type === "array" && i < path.length) {
      i++;
      s = def.element;
    } else if (def.type === "record" && i < path.length) {
      i++;
      s = def.valueType;
    } else if (def.type === "union" && def.options) {
      const all = def.options.map((o) => fieldsAt(o, path.slice(i))?.names ?? []);
      return { names: [...new Set(all.flat())], exact: false };
    } else return undefined;
  }
  return undefined;
}

/** The known name at most two edits from `name` (a typo), if one is. */
function nearest(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d <= 2 && (best === undefined || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] ?? 0;
}
