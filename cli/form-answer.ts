/**
 * An upstream MCP server's form, filled in on a terminal after the person chose accept: one line per
 * field (`  name (string, required) Your name: `), typed as its schema says (an integer is sent as a
 * number, `y`/`n` as a boolean, commas split a list). The content is checked against the form's
 * schema here, as the server checks it again: a field that does not fit is said and asked again,
 * the others kept. An empty line leaves an optional field out.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { ArgProblem } from "../tools/catalogue/json-schema.js";
import { printable } from "../tools/catalogue/printable.js";
import type { ElicitContent } from "../tools/gate/asks.js";

/** One field of a form, as the terminal asks it. */
export interface FormField {
  name: string;
  /** `string`, `integer`, `number`, `boolean`, `array` (of strings), or what else the schema says. */
  type: string;
  required: boolean;
  /** The schema's title or description, shown after the field's name. */
  label?: string;
  /** The values it takes, when the schema lists them. */
  choices?: string[];
}

/** The fields of a form's schema (a flat object, as MCP elicitation allows), in the schema's order. */
export function formFields(schema: Record<string, unknown>): FormField[] {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  return Object.entries(props).map(([name, p]) => {
    const items = (p?.items ?? {}) as Record<string, unknown>;
    const listed =
      p?.enum ?? items.enum ?? (items.anyOf as Array<{ const?: unknown }> | undefined)?.map((o) => o.const);
    const label =
      typeof p?.title === "string" ? p.title : typeof p?.description === "string" ? p.description : undefined;
    return {
      name,
      type: typeof p?.type === "string" ? p.type : "string",
      required: required.has(name),
      ...(label ? { label } : {}),
      ...(Array.isArray(listed) ? { choices: listed.map(String) } : {}),
    };
  });
}

/** The prompt of one field: `  age (integer) How old: `, every part neutralised. */
export function fieldPrompt(f: FormField): string {
  const kind = f.choices ? `${f.type === "array" ? "some of" : "one of"} ${f.choices.join("|")}` : f.type;
  const label = f.label ? ` ${f.label}` : "";
  return printable(`  ${f.name} (${kind}${f.required ? ", required" : ""})${label}: `);
}

/**
 * What a typed line stands for in a field of this type: undefined for an empty line (left out);
 * what cannot be read as the type is kept as typed, so the schema check says what was expected.
 */
export function fieldValue(f: FormField, line: string): ElicitContent[string] | undefined {
  const text = line.trim();
  if (text === "") return undefined;
  switch (f.type) {
    case "integer":
    case "number": {
      const n = Number(text);
      return Number.isFinite(n) ? n : text;
    }
    case "boolean": {
      const t = text.toLowerCase();
      if (t === "y" || t === "yes" || t === "true") return true;
      if (t === "n" || t === "no" || t === "false") return false;
      return text;
    }
    case "array":
      return text
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    default:
      return line;
  }
}

/** The problems of a content against the form. */
export type FormCheck = (content: ElicitContent) => Promise<ArgProblem[]>;

/**
 * The form's schema compiled as the server compiles it (ajv, loaded only when a form is filled in);
 * a schema that does not compile leaves the verdict to the server, which says so.
 */
export function schemaCheck(schema: Record<string, unknown>): FormCheck {
  return async (content) => {
    const { argProblems, createSchemaCompiler } = await import("../tools/catalogue/json-schema.js");
    let validate: ReturnType<ReturnType<typeof createSchemaCompiler>["compile"]>;
    try {
      validate = createSchemaCompiler({ maxCached: 1 }).compile(schema);
    } catch {
      return [];
    }
    return validate(structuredClone(content)) ? [] : argProblems(validate.errors, content);
  };
}

export type FormAnswer = { content: ElicitContent } | { stopped: "interrupt" | "eof" | "aborted" };

export interface FormQuestion {
  input: Readable;
  output: Writable;
  schema: Record<string, unknown>;
  check: FormCheck;
  /** How many times the fields that do not fit are asked again before giving up (eof). */
  rounds?: number;
  /** Stops asking (the question was decided elsewhere, or the turn ended): answers `aborted`. */
  signal?: AbortSignal;
}

/**
 * Asks each field on its own line, then the fields that do not fit the schema again; answers the
 * content, or `interrupt` (Ctrl-C: the turn stops) / `eof` (Ctrl-D, or still not fitting after
 * `rounds`: the person is asked accept / decline / cancel again) / `aborted` (`signal`).
 */
export async function askForm(q: FormQuestion): Promise<FormAnswer> {
  const fields = formFields(q.schema);
  const rl = createInterface({ input: q.input, output: q.output, terminal: true });
  let stopped: "interrupt" | "eof" | "aborted" | undefined;
  let pending: ((line: string | undefined) => void) | undefined;
  const stop = (why: "interrupt" | "eof" | "aborted") => {
    stopped ??= why;
    pending?.(undefined);
  };
  const onAbort = () => {
    if (stopped) return;
    q.output.write("(decided elsewhere)\n");
    stop("aborted");
    rl.close();
  };
  if (q.signal?.aborted) stop("aborted");
  q.signal?.addEventListener("abort", onAbort, { once: true });
  rl.on("SIGINT", () => {
    q.output.write("^C\n");
    stop("interrupt");
    rl.close();
  });
  rl.on("close", () => stop("eof"));
  const ask = (prompt: string) =>
    new Promise<string | undefined>((resolve) => {
      if (stopped) return resolve(undefined);
      pending = resolve;
      rl.question(prompt, resolve);
    });
  try {
    const values = new Map<string, ElicitContent[string]>();
    let asking = fields;
    for (let round = 0; round <= (q.rounds ?? 3); round++) {
      for (const f of asking) {
        const line = await ask(fieldPrompt(f));
        if (line === undefined) return { stopped: stopped ?? "eof" };
        const value = fieldValue(f, line);
        if (value === undefined) values.delete(f.name);
        else values.set(f.name, value);
      }
      // in the form's order, whichever round gave each field
      const content: ElicitContent = {};
      for (const f of fields) {
        const value = values.get(f.name);
        if (value !== undefined) content[f.name] = value;
      }
      const problems = await q.check(content);
      if (problems.length === 0) return { content };
      for (const p of problems) {
        const field = p.field.replace(/^\//, "") || "the form";
        const got = p.got === undefined ? "" : `, got ${p.got}`;
        q.output.write(`${printable(`  ${field}: expected ${p.expected}${got}`)}\n`);
      }
      const named = new Set(problems.map((p) => p.field.replace(/^\//, "").split("/")[0]));
      asking = fields.filter((f) => named.has(f.name));
      // a problem of the whole form (no field named): every field again
      if (asking.length === 0) asking = fields;
    }
    q.output.write("  (the answer still does not fit the form)\n");
    return { stopped: "eof" };
  } finally {
    q.signal?.removeEventListener("abort", onAbort);
    rl.close();
  }
}
