/**
 * The kinds a value may have, with no other dependency: the wire schemas (tree/http/schemas.ts)
 * import them, and the web page type-checks those schemas without Node's types.
 */
export const VALUE_KINDS = ["int64", "float64", "bool", "char/utf8", "json"] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];
/** A value's kind, or `index`: a directory's kind (it has children, not a value). */
export type NodeKind = ValueKind | "index";

/** A JSON value as parsed by JSON.parse. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
