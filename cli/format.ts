/**
 * The kvspace output format, as pure functions: one record a line, fields separated by TAB,
 * values printed plainly (`formatValue` of tree/value.ts). Every function returns a line without
 * its trailing newline.
 */

import { compareNames } from "../tree/path.js";
import type { ExportEntry, HistoryEntry, ListChild, TreeNode, WatchEvent } from "../tree/types.js";
import type { TreeValue } from "../tree/value.js";
import { formatValue } from "../tree/value.js";

/** Fields joined by TAB. */
export function tabLine(...fields: Array<string | number>): string {
  return fields.join("\t");
}

/** `kind:value`, as `get` prints a value: `int64:42`, `char/utf8:hi`. */
export function formatKindValue(value: TreeValue): string {
  return `${value.kind}:${formatValue(value)}`;
}

/** A directory's value column: its number of children in parentheses. */
export function formatCount(count: number): string {
  return `(${count})`;
}

/** `get`: `key<TAB>kind:value`, `key<TAB>index:(N)` for a directory, `key<TAB>(nil)` when absent. */
export function formatGetLine(key: string, node: TreeNode | undefined): string {
  if (node === undefined) return tabLine(key, "(nil)");
  if (node.kind === "index") return tabLine(key, `index:${formatCount(node.count)}`);
  return tabLine(key, formatKindValue(node.value));
}

/** `head`: `key<TAB>kind<TAB>ro=0|1<TAB>version=N<TAB>createRev=N<TAB>modRev=N`, or `key<TAB>(nil)`. */
export function formatHeadLine(key: string, node: TreeNode | undefined): string {
  if (node === undefined) return tabLine(key, "(nil)");
  return tabLine(
    key,
    node.kind,
    `ro=${node.ro ? 1 : 0}`,
    `version=${node.version}`,
    `createRev=${node.createRev}`,
    `modRev=${node.modRev}`,
  );
}

/** The value column of a child: the plain value, or `(N)` for a directory. */
function childValue(child: ListChild): string | undefined {
  if (child.kind === "index") return formatCount(child.count);
  return child.value === undefined ? undefined : formatValue(child.value);
}

/**
 * `list`: `name<TAB>kind<TAB>value` (`name<TAB>value` without kinds); a directory prints
 * `name/<TAB>index<TAB>(N)`.
 */
export function formatListLine(child: ListChild, options: { kind?: boolean } = {}): string {
  const { kind = true } = options;
  const fields: string[] = [child.name];
  if (kind) fields.push(child.kind);
  const value = childValue(child);
  if (value !== undefined) fields.push(value);
  return tabLine(...fields);
}

/** What `tree` draws: a child of a directory, with its own children when it is one. */
export interface TreeDrawNode {
  /** As listed: directories end with '/'. */
  name: string;
  kind: ListChild["kind"];
  value?: TreeValue;
  children?: TreeDrawNode[];
}

/** Tree order: names in natural order, a value before a directory of the same name. */
export function compareTreeNames(a: string, b: string): number {
  const da = a.endsWith("/");
  const db = b.endsWith("/");
  return compareNames(da ? a.slice(0, -1) : a, db ? b.slice(0, -1) : b) || Number(da) - Number(db);
}

/** How many characters of a value `tree` shows before `…` (without `--full`). */
export const TREE_VALUE_WIDTH = 60;

/**
 * A value as one line: line breaks shown as `↵` (a drawing never breaks), and unless `full`, cut
 * to `width` characters (code points) ending with `…`.
 */
export function oneLine(text: string, options: { full?: boolean; width?: number } = {}): string {
  const { full = false, width = TREE_VALUE_WIDTH } = options;
  const flat = text.replace(/\r\n|\r|\n/g, "↵");
  if (full) return flat;
  const chars = [...flat];
  return chars.length > width ? `${chars.slice(0, width - 1).join("")}…` : flat;
}

/**
 * One line of `tree`: the indent, the branch, the name and (for a value) the value on one line,
 * kinds optional; a directory not descended into (`--depth`) shows its count.
 */
export function formatTreeLine(
  indent: string,
  last: boolean,
  node: Pick<TreeDrawNode, "name" | "kind" | "value"> & { count?: number },
  options: { kind?: boolean; full?: boolean; cut?: boolean } = {},
): string {
  const head = `${indent}${last ? "└── " : "├── "}${node.name}`;
  if (node.kind === "index")
    return options.cut && node.count !== undefined && node.count > 0
      ? tabLine(head, formatCount(node.count))
      : head;
  if (node.value === undefined) return head;
  const value = oneLine(formatValue(node.value), { full: options.full === true });
  return options.kind ? tabLine(head, node.kind, value) : tabLine(head, value);
}

/** The indent under a child: `│   ` below a child that has siblings after it, four spaces below the last. */
export function childIndent(indent: string, last: boolean): string {
  return indent + (last ? "    " : "│   ");
}

/** The whole `tree` drawing of an in-memory subtree: the root on the first line, then its children. */
export function drawTree(root: string, children: TreeDrawNode[], options: { kind?: boolean } = {}): string[] {
  const lines = [root];
  const walk = (nodes: TreeDrawNode[], indent: string): void => {
    const sorted = [...nodes].sort((a, b) => compareTreeNames(a.name, b.name));
    sorted.forEach((node, i) => {
      const last = i === sorted.length - 1;
      lines.push(formatTreeLine(indent, last, node, options));
      if (node.children) walk(node.children, childIndent(indent, last));
    });
  };
  walk(children, "");
  return lines;
}

/**
 * `watch`: `rev<TAB>type<TAB>key`, then for a put `<TAB>kind:value` (`<TAB>index` for a
 * directory).
 */
export function formatWatchLine(event: WatchEvent): string {
  const fields: Array<string | number> = [event.rev, event.type, event.key];
  if (event.type === "put") {
    if (event.value !== undefined) fields.push(formatKindValue(event.value));
    else if (event.kind !== undefined) fields.push(event.kind);
  }
  return tabLine(...fields);
}

/**
 * `history`: `key<TAB>version=N<TAB>modRev=N<TAB>kind:value`, and `<TAB>deleted` for the version
 * recorded when the key was deleted.
 */
export function formatHistoryLine(entry: HistoryEntry): string {
  const fields = [
    entry.key,
    `version=${entry.version}`,
    `modRev=${entry.modRev}`,
    formatKindValue(entry.value),
  ];
  if (entry.deleted) fields.push("deleted");
  return tabLine(...fields);
}

/** `export`: one compact JSON object a line. */
export function formatExportLine(entry: ExportEntry): string {
  return JSON.stringify(entry);
}

/** `import`'s summary: `imported<TAB>N<TAB>rev=R`. */
export function formatImportLine(imported: number, rev: number): string {
  return tabLine("imported", imported, `rev=${rev}`);
}

/**
 * A progress bar for a terminal: `[#####-----]  42%  1.2 MB / 3.0 MB`, or when the total is
 * unknown, what was done so far.
 */
export function formatProgress(done: number, total: number | undefined, width = 30): string {
  if (total === undefined || total <= 0) return `${formatBytes(done)} read`;
  const ratio = Math.min(1, Math.max(0, done / total));
  const filled = Math.round(ratio * width);
  const percent = String(Math.floor(ratio * 100)).padStart(3, " ");
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${percent}%  ${formatBytes(done)} / ${formatBytes(total)}`;
}

/** Bytes in B, KB, MB or GB (powers of 1024), one decimal above bytes. */
export function formatBytes(bytes: number): string {
  const units = ["KB", "MB", "GB"];
  if (bytes < 1024) return `${bytes} B`;
  let n = bytes;
  let unit = "B";
  for (const u of units) {
    if (n < 1024) break;
    n /= 1024;
    unit = u;
  }
  return `${n.toFixed(1)} ${unit}`;
}
