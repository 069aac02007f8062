import { TreeError } from "./errors.js";
import { parseKey } from "./path.js";
import type { HistRecord } from "./record.js";
import type { ExportEntry, ExportedVersion, ListChild, Tree, TreeNode } from "./types.js";
import { isValueKind, type TreeValue, valueFromJson, valueToJson } from "./value.js";

/** What an export reads through: the tree itself, or a view of it at one point in time. */
export type TreeReader = Pick<Tree, "get" | "list" | "history">;

/** Walks `dir` depth-first in natural order, yielding every directory and value (system entries too). */
export async function* exportTree(tree: TreeReader, dir: string): AsyncGenerator<ExportEntry> {
  const node = await tree.get(dir);
  if (!node) throw new TreeError("TREE_NOT_FOUND", `no directory ${dir}`, { key: dir });
  if (dir !== "/") yield await entryOf(tree, dir, node);
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
      yield await entryOf(tree, key, c);
      if (c.kind === "index") yield* walk(tree, key);
    }
    if (page.next === undefined) return;
    after = page.next;
  }
}

async function entryOf(tree: TreeReader, key: string, node: TreeNode | ListChild): Promise<ExportEntry> {
  const e: ExportEntry = { key, kind: node.kind };
  if (node.kind !== "index" && node.value !== undefined) e.value = valueToJson(node.value);
  if (node.ro) e.ro = true;
  if (node.vid !== undefined) e.vid = node.vid;
  if (node.kind === "index") return e;
  if (node.version > 1) e.version = node.version;
  const kept = await tree.history(key);
  if (kept.length > 0)
    e.history = kept.reverse().map((h) => {
      const v: ExportedVersion = {
        kind: h.kind,
        value: valueToJson(h.value),
        version: h.version,
        mtime: h.mtime,
      };
      if (h.deleted) v.deleted = true;
      return v;
    });
  return e;
}

/**
 * The history records an imported value keeps: the line's versions, the newest `limit` of them,
 * oldest first, each with the storage suffix it is kept under. Revisions belong to the store that
 * wrote them, so an imported version's modRev is 0 and its suffix negative (-n … -1): no revision
 * this store gives a later write can take its place.
 */
export function restoredHistory(
  versions: ImportedVersion[],
  limit: number,
): Array<{ suffix: number; rec: HistRecord }> {
  const kept = limit > 0 ? versions.slice(-limit) : [];
  return kept.map((h, i) => {
    const rec: HistRecord = {
      k: h.value.kind as HistRecord["k"],
      v: valueToJson(h.value),
      ver: h.version,
      mr: 0,
      mt: h.mtime,
    };
    if (h.deleted) rec.d = 1;
    return { suffix: i - kept.length, rec };
  });
}

/** An import line's version and previous versions. */
export interface Restore {
  version?: number;
  history?: ImportedVersion[];
}

/** The put event an import wrote for `key` carries the version the line restored. */
export function restoredEvent(
  events: Array<{ t: string; key: string; ver?: number }>,
  key: string,
  ver: number,
): void {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i]!;
    if (ev.key === key && ev.t === "put") {
      ev.ver = ver;
      return;
    }
  }
}

/** A previous version read from an import line. */
export interface ImportedVersion {
  value: TreeValue;
  version: number;
  mtime: number;
  deleted?: boolean;
}

export interface ImportItem {
  key: string;
  dir: boolean;
  value: TreeValue;
  /** As the line gave it; absent: the key keeps its flag. */
  ro?: boolean;
  vid?: string;
  /** Clears the key's owner run (ExportEntry.disown); never with `vid`. */
  disown?: boolean;
  /** What the line says of the value's past: written over what the import's own write made. */
  restore?: Restore;
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
      else if (e.disown === true) item.disown = true;
      const restore = restoreOf(e, checkValue);
      if (restore) item.restore = restore;
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

const isVersion = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) > 0;
const isTime = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0;

/** A line's version and history, checked (a wrong one throws, naming the field). */
function restoreOf(e: Partial<ExportEntry>, checkValue: (v: TreeValue) => void): Restore | undefined {
  if (e.version === undefined && e.history === undefined) return undefined;
  const out: Restore = {};
  if (e.version !== undefined) {
    if (!isVersion(e.version))
      throw new Error(`version must be a positive integer, got ${JSON.stringify(e.version)}`);
    out.version = e.version;
  }
  if (e.history !== undefined) {
    if (!Array.isArray(e.history)) throw new Error("history must be a list of previous versions");
    out.history = e.history.map((h: Partial<ExportedVersion> | null, i) => {
      const where = `history[${i}]`;
      if (h === null || typeof h !== "object") throw new Error(`${where} must be an object`);
      if (typeof h.kind !== "string" || !isValueKind(h.kind))
        throw new Error(`${where}.kind must be a value kind`);
      if (!isVersion(h.version)) throw new Error(`${where}.version must be a positive integer`);
      if (!isTime(h.mtime)) throw new Error(`${where}.mtime must be a time in ms`);
      let value: TreeValue;
      try {
        value = valueFromJson(h.kind, h.value);
        checkValue(value);
      } catch (err) {
        throw new Error(`${where}.value: ${(err as Error).message}`);
      }
      return { value, version: h.version, mtime: h.mtime, ...(h.deleted === true ? { deleted: true } : {}) };
    });
  }
  return out;
}
