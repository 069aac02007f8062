/**
 * Reading and writing byteseek's own documents (the families of `docs.ts`, at the keys of
 * `keys.ts`): what is read back is parsed with the family's schema, never cast, and a document that
 * does not match answers `DOC_MALFORMED` naming the key and what is wrong — instead of a crash
 * somewhere deeper that trusted the shape. Writes take the schema's type, so the compiler checks
 * what goes in; they do not parse again (a call record is written on every call, and its type is
 * already the schema's).
 */
import type { z } from "zod";
import type { SetOptions, Tree, TreeNode, WriteResult } from "../../tree/types.js";
import type { Json, TreeValue } from "../../tree/value.js";
import { DocError } from "../errors.js";

/**
 * A kind of document byteseek stores: what it is called in messages, its schema, and (a type
 * only) what may be written as one — by default the schema's input; a family read loose (fields a
 * newer byteseek added kept) names its declared fields here, so an interface of the same shape
 * (`ChatMessage`) can be written without a cast.
 */
export interface DocFamily<S extends z.ZodType = z.ZodType, W = z.input<S>> {
  /** How a message names one, e.g. "an approval entry". */
  what: string;
  schema: S;
  /** Never set: carries the type writers take. */
  readonly writes?: W;
}

export function docFamily<S extends z.ZodType, W = z.input<S>>(what: string, schema: S): DocFamily<S, W> {
  return { what, schema };
}

/** The document a family's schema reads. */
export type Doc<F extends DocFamily> = z.output<F["schema"]>;
/** What may be written as one. */
export type DocInput<F extends DocFamily> = NonNullable<F["writes"]>;

/** `path: message`, one line each, for a person to find the field. */
export function docProblems(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`);
}

function malformed(family: DocFamily, key: string, why: string, problems: string[]): DocError {
  return new DocError(
    "DOC_MALFORMED",
    `${key} does not hold ${family.what}: ${why}. It was written by hand or damaged: read it with kvspace get ${key}, then write it again as docs/ARCHITECTURE.md ("The tree's own keys") describes, or delete it with kvspace del ${key}`,
    { key, problems },
  );
}

/**
 * The document a node holds, parsed; undefined when there is no node. A node that is not json, or
 * whose value does not match the family's schema, throws `DOC_MALFORMED`.
 */
export function parseDoc<F extends DocFamily>(
  family: F,
  key: string,
  node: (Pick<TreeNode, "kind"> & { value?: TreeValue | undefined }) | undefined,
): Doc<F> | undefined {
  if (node === undefined) return undefined;
  return parseDocValue(family, key, node.kind === "json" ? node.value : undefined, node.kind);
}

/** As `parseDoc`, for a value already in hand (a watch event's, a listing's child's). */
export function parseDocValue<F extends DocFamily>(
  family: F,
  key: string,
  value: TreeValue | undefined,
  kind: string = value?.kind ?? "absent",
): Doc<F> {
  if (value?.kind !== "json") throw malformed(family, key, `it holds a ${kind} value, not json`, []);
  const parsed = family.schema.safeParse(value.value);
  if (parsed.success) return parsed.data as Doc<F>;
  const problems = docProblems(parsed.error);
  throw malformed(family, key, problems.join("; "), problems);
}

/**
 * As `parseDoc`, answering the stored value itself once the schema has read it: for a document
 * written back with one field changed (a registry entry's sign-in session), so every other field
 * keeps its bytes and its place. Only for a family whose schema adds, drops and changes nothing
 * (no defaults, no transforms, no stripped keys: strict or loose objects).
 */
export function parseDocAsStored<F extends DocFamily>(
  family: F,
  key: string,
  node: (Pick<TreeNode, "kind"> & { value?: TreeValue | undefined }) | undefined,
): Doc<F> | undefined {
  if (parseDoc(family, key, node) === undefined) return undefined;
  // the schema accepted this very value and changes nothing of it (the contract above)
  return node?.value?.value as Doc<F>;
}

/** The document at `key`, parsed; undefined when the key is absent; `DOC_MALFORMED` when it does not match. */
export async function readDoc<F extends DocFamily>(
  tree: Pick<Tree, "get">,
  family: F,
  key: string,
): Promise<Doc<F> | undefined> {
  return parseDoc(family, key, await tree.get(key));
}

/**
 * The tree value of a document: its type is the family's, which admits only what JSON holds (the
 * tree checks the value again on write). The one place a typed document becomes a `Json`.
 */
export function docValue<F extends DocFamily>(_family: F, doc: DocInput<F>): TreeValue {
  // A schema's type names `unknown` fields (a call's `args`) that JSON admits but `Json` cannot
  // name; the tree's checkValue refuses anything JSON cannot hold, on every write.
  return { kind: "json", value: doc as Json };
}

/** Writes a document (typed as its family's schema) at `key`. */
export function writeDoc<F extends DocFamily>(
  tree: Pick<Tree, "set">,
  family: F,
  key: string,
  doc: DocInput<F>,
  options?: SetOptions,
): Promise<WriteResult> {
  return tree.set(key, docValue(family, doc), options);
}

/** Appends a document (typed as its family's schema) as the next child of `dir`. */
export function appendDoc<F extends DocFamily>(
  tree: Pick<Tree, "append">,
  family: F,
  dir: string,
  doc: DocInput<F>,
  options?: Parameters<Tree["append"]>[2],
): Promise<WriteResult> {
  return tree.append(dir, docValue(family, doc), options);
}
