import { Ajv as AjvDraft07 } from "ajv";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { z } from "zod";

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as <A extends Ajv2020 | AjvDraft07>(ajv: A) => A;

/**
 * The dialect a schema's `$schema` names: draft-07 (and the older drafts, read as draft-07, whose
 * tuple `items` they share) or 2020-12 (also the default, and 2019-09's nearest). An upstream MCP
 * tool's schema keeps its `$schema`, so a draft-07 tuple `items: [...]` means what its author meant.
 */
function dialectOf(schema: Record<string, unknown>): "draft-07" | "2020-12" {
  const id = typeof schema.$schema === "string" ? schema.$schema : "";
  return /draft-0[4-7]\b/.test(id) ? "draft-07" : "2020-12";
}

/** One failing field of a call's arguments, as the model should read it. */
export interface ArgProblem {
  /** JSON pointer of the field (`/edits/1/old`), or `/` for the arguments object itself. */
  field: string;
  /** What the schema expects there. */
  expected: string;
  /** What the call gave, in a few characters. */
  got?: string;
}

/**
 * Compiles argument schemas once per distinct schema text. Strict mode is off so that an
 * agent-written schema with an annotation ajv does not know (`examples`, `x-…`) still compiles;
 * a schema that breaks the meta-schema (`type: "strng"`) still fails.
 */
export function createSchemaCompiler(options: { maxCached?: number } = {}) {
  const maxCached = options.maxCached ?? 512;
  const settings = { allErrors: true, strict: false, logger: false, useDefaults: true } as const;
  const ajv = {
    "2020-12": addFormats(new Ajv2020(settings)),
    "draft-07": addFormats(new AjvDraft07(settings)),
  };
  const cache = new Map<string, ValidateFunction>();

  /** Compiles `schema` in the dialect its `$schema` names (default 2020-12), or throws with ajv's reason. */
  function compile(schema: Record<string, unknown>): ValidateFunction {
    const text = JSON.stringify(schema);
    const hit = cache.get(text);
    if (hit) return hit;
    // the dialect is chosen here; the keyword itself is left out so either class compiles it
    const { $schema: _chosen, ...rest } = schema;
    const validate = ajv[dialectOf(schema)].compile(rest);
    if (cache.size >= maxCached) cache.clear();
    cache.set(text, validate);
    return validate;
  }

  return { compile };
}

export type SchemaCompiler = ReturnType<typeof createSchemaCompiler>;

/** Turns ajv's errors into one problem per failing field, most useful first. */
export function argProblems(errors: ErrorObject[] | null | undefined, args: unknown): ArgProblem[] {
  const out: ArgProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    let field = e.instancePath || "/";
    let expected = e.message ?? e.keyword;
    const params = e.params as Record<string, unknown>;
    if (e.keyword === "required") {
      field = `${e.instancePath}/${String(params.missingProperty)}`;
      expected = "a value (this argument is required)";
    } else if (e.keyword === "additionalProperties") {
      field = `${e.instancePath}/${String(params.additionalProperty)}`;
      expected = "no such argument (remove it)";
    } else if (e.keyword === "enum") {
      expected = `one of ${JSON.stringify(params.allowedValues)}`;
    }
    const key = `${field}\u0000${expected}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const got = e.keyword === "required" ? undefined : describeValue(pointerGet(args, e.instancePath));
    out.push(got === undefined ? { field, expected } : { field, expected, got });
  }
  return out;
}

/** `edit.replace(path: string, old: string, new: string, dry?: boolean)` from an object schema. */
export function signatureOf(name: string, params: Record<string, unknown>): string {
  const properties = (params.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(params.required) ? (params.required as string[]) : []);
  const parts = Object.entries(properties).map(function param([key, schema]) {
    return `${key}${required.has(key) ? "" : "?"}: ${typeName(schema)}`;
  });
  return `${name}(${parts.join(", ")})`;
}

function typeName(schema: Record<string, unknown> | undefined): string {
  if (!schema || typeof schema !== "object") return "any";
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const type = schema.type;
  if (type === "array") return `${typeName(schema.items as Record<string, unknown>)}[]`;
  if (Array.isArray(type)) return type.join(" | ");
  if (typeof type === "string") return type;
  const union = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (Array.isArray(union)) return union.map(typeName).join(" | ");
  return "any";
}

function pointerGet(root: unknown, pointer: string): unknown {
  if (!pointer) return root;
  let cur: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function describeValue(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  const type = v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
  const text = JSON.stringify(v) ?? String(v);
  return `${type} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}

/**
 * The JSON Schema of a zod object schema, as a declaration's `params`: the input side (a field
 * with a default is optional), `$schema` dropped (declarations are compiled as draft 2020-12).
 */
export function paramsFromZod(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}
