import { childToJson } from "../../tree/http/convert.js";
import type { ChildJson } from "../../tree/http/schemas.js";
import { parseDirKey } from "../../tree/path.js";
import type { ListChild, Tree } from "../../tree/types.js";
import type { CommandContext } from "../command.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { usageError } from "../errors.js";
import { childIndent, compareTreeNames, formatTreeLine, TREE_VALUE_WIDTH } from "../format.js";
import { listChildren } from "./list-children.js";

const USAGE = "tree [--kind] [--full] [--depth N] <dir/>";

interface DrawOptions {
  kind: boolean;
  full: boolean;
  /** Levels below the root still drawn; a directory at 0 is drawn with its count, not opened. */
  depth: number;
}

/**
 * `kvspace tree [--kind] [--full] [--depth N] <dir/>` → the directory, then its subtree drawn
 * with `├── `, `└── `, `│   ` and four-space indents, one line per entry: a value is shown on one
 * line (line breaks as `↵`) and cut to 60 characters with `…` unless `--full`. Lines are written
 * as directories are listed, so a large subtree is never held in memory beyond one directory's
 * children per level. `--showext[=false]` (upstream's overlays, which this tree does not have) is
 * accepted and changes nothing.
 */
export const treeCommand = defineCommand({
  name: "tree",
  usage: USAGE,
  summary: "draw a directory's subtree, one line per entry",
  help: [
    `Values are shown on one line (line breaks as ↵), cut to ${TREE_VALUE_WIDTH} characters with … unless --full;`,
    "kvspace get <key> prints one whole. A directory below --depth shows its number of entries.",
    "Example: kvspace tree --depth 1 /byteseek/",
    "-o ndjson: one entry a line, depth first, as list -o ndjson prints a child (whole values, with its key);",
    "-o json: {key, entries: [...]} with the same entries.",
  ].join("\n"),
  outputs: ["json", "ndjson"],
  args: { min: 1, max: 1 },
  flags: { kind: "bool", full: "bool", depth: "value", showext: "bool" },
  flagHelp: {
    kind: "show each value's kind",
    full: "show values whole (still one line each)",
    depth: "draw N levels below the directory (1: its children only)",
    showext: "accepted for upstream kvspace's scripts; changes nothing (there are no overlays)",
  },
  async run({ positionals: [dir], flags }, ctx) {
    const key = parseDirKey(dir).key;
    let depth = Number.POSITIVE_INFINITY;
    if (typeof flags.depth === "string") {
      if (!/^[1-9][0-9]*$/.test(flags.depth))
        throw usageError(USAGE, `--depth takes a whole number from 1, got '${flags.depth}'`);
      depth = Number(flags.depth);
    }
    const options: DrawOptions = { kind: flags.kind === true, full: flags.full === true, depth };
    // List the root before printing anything, so an absent directory prints only the error.
    const text = ctx.output !== "json" && ctx.output !== "ndjson";
    const children = await sortedChildren(ctx.tree, key, ctx.signal, text && depth <= 1);
    if (ctx.output === "json" || ctx.output === "ndjson") {
      const entries: ChildJson[] = [];
      const emit = (e: ChildJson) =>
        ctx.output === "ndjson" ? writeJson(ctx.stdout, e) : Promise.resolve(void entries.push(e));
      await walk(ctx.tree, key, children, depth, emit, ctx.signal);
      if (ctx.output === "json") await writeJson(ctx.stdout, { key, entries });
      return 0;
    }
    await writeLine(ctx.stdout, key);
    await drawChildren(ctx.tree, key, children, "", options, ctx);
    return 0;
  },
});

/** Every entry below `dir` to `depth` levels, depth first in tree order, as JSON objects. */
async function walk(
  tree: Tree,
  dir: string,
  children: ListChild[],
  depth: number,
  emit: (e: ChildJson) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  for (const child of children) {
    await emit(childToJson(child));
    if (child.kind === "index" && depth > 1)
      await walk(
        tree,
        dir + child.name,
        await sortedChildren(tree, dir + child.name, signal),
        depth - 1,
        emit,
        signal,
      );
  }
}

/** The children of `dir` in tree order; `visibleCounts`: directories count what a listing shows (drawn cut). */
async function sortedChildren(
  tree: Tree,
  dir: string,
  signal: AbortSignal,
  visibleCounts = false,
): Promise<ListChild[]> {
  const children: ListChild[] = [];
  for await (const child of listChildren(tree, dir, { signal, visibleCounts })) children.push(child);
  return children.sort((a, b) => compareTreeNames(a.name, b.name));
}

async function drawChildren(
  tree: Tree,
  dir: string,
  children: ListChild[],
  indent: string,
  options: DrawOptions,
  ctx: Pick<CommandContext, "stdout" | "signal">,
): Promise<void> {
  const cut = options.depth <= 1;
  for (const [i, child] of children.entries()) {
    const last = i === children.length - 1;
    await writeLine(ctx.stdout, formatTreeLine(indent, last, child, { ...options, cut }));
    if (child.kind !== "index" || cut) continue;
    const sub = dir + child.name;
    await drawChildren(
      tree,
      sub,
      await sortedChildren(tree, sub, ctx.signal, options.depth - 1 <= 1),
      childIndent(indent, last),
      { ...options, depth: options.depth - 1 },
      ctx,
    );
  }
}
