import { TreeError } from "./errors.js";
import { parseKey } from "./path.js";
import type { ExportEntry, Tree } from "./types.js";
import { type TreeValue, valueFromJson, valueToJson } from "./value.js";

/** What an export reads through: the tree itself, or a view of it at one point in time. */
export type TreeReader = Pick<Tree, "get" | "list">;

/** Walks `dir` depth-first in natural order, yielding every directory and value (system entries too). */
export async function* exportTree(tree: TreeReader, dir: string): AsyncGenerator<ExportEntry> {
  const node = await tree.get(dir);
  if (!node) throw new TreeError("TREE_NOT_FOUND", `no directory ${dir}`, { key: dir });
  if (dir !== "/") yield entryOf(dir, node.kind, undefined, node.ro, node.vid);
  yield* walk(tree, dir);
}

async function* walk(tree: TreeReader, dir: string): AsyncGenerator<ExportEntry> {
  let after: string | undefined;
  for (;;) {
    const page = await tree.list(dir, {
      limit: 1000,
      system: true,
      ...(after !== undefined ? { after } : {}),
    });
    for (const c of page.children) {
      const key = dir + c.name;
      if (c.kind === "index") {
        yield entryOf(key, "index", undefined, c.ro, c.vid);
        yield* walk(tree, key);
      } else yield entryOf(key, c.kind, c.value, c.ro, c.vid);
    }
    if (page.next === undefined) return;
    after = page.next;
  }
}

function entryOf(
  key: string,
  kind: ExportEntry["kind"],
  value: TreeValue | undefined,
  ro: boolean,
  vid: string | undefined,
): ExportEntry {
  const e: ExportEntry = { key, kind };
  if (value !== undefined) e.value = valueToJson(value);
  if (ro) e.ro = true;
  if (vid !== undefined) e.vid = vid;
  return e;
}

export interface ImportItem {
  key: string;
  dir: boolean;
  value: TreeValue;
  /** As the line gave it; absent: the key keeps its flag. */
  ro?: boolean;
  vid?: string;
  /** The line it came from (1-based). */
  line: number;
}

/** An import that would overwrite a read-only key without force: the error names the line. */
export function importReadOnly(item: ImportItem): TreeError {
  return new TreeError(
    "TREE_READ_ONLY",
    `import failed at line ${item.line}: ${item.key} is read-only; import with force (HTTP ?force=1, kvspace import --force) to overwrite read-only keys; nothing was imported`,
    { key: item.key, line: item.line },
  );
}

/**
 * Reads and checks every entry before anything is written, so an import is all or nothing;
 * the error names the line (1-based) that is wrong.
 */
export async function parseImport(
  entries: AsyncIterable<ExportEntry | string> | Iterable<ExportEntry | string>,
  checkValue: (v: TreeValue) => void,
): Promise<ImportItem[]> {
  const items: ImportItem[] = [];
  let line = 0;
  for await (const raw of entries) {
    line++;
    if (typeof raw === "string" && raw.trim() === "") continue;
    try {
      const e = (typeof raw === "string" ? JSON.parse(raw) : raw) as Partial<ExportEntry> | null;
      if (e === null || typeof e !== "object" || Array.isArray(e))
        throw new Error("a line must be a JSON object");
      const parsed = parseKey(e.key);
      if (e.kind === "index") {
        if (!parsed.dir) throw new Error("a directory entry's key must end with '/'");
        items.push({ key: parsed.key, dir: true, value: { kind: "bool", value: false }, line });
        continue;
      }
      if (parsed.dir) throw new Error("a value's key must not end with '/'");
      const value = valueFromJson(e.kind, e.value);
      checkValue(value);
      const item: ImportItem = { key: parsed.key, dir: false, value, line };
      if (typeof e.ro === "boolean") item.ro = e.ro;
      if (typeof e.vid === "string") item.vid = e.vid;
      items.push(item);
    } catch (err) {
      throw new TreeError(
        "TREE_IMPORT_FAILED",
        `import failed at line ${line}: ${(err as Error).message}; nothing was imported`,
        {
          line,
        },
      );
    }
  }
  return items;
}
