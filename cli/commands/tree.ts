import { parseDirKey } from "../../tree/path.js";
import type { ListChild, Tree } from "../../tree/types.js";
import type { CommandContext } from "../command.js";
import { defineCommand, writeLine } from "../command.js";
import { childIndent, compareTreeNames, formatTreeLine } from "../format.js";
import { listChildren } from "./list-children.js";

/**
 * `kvspace tree [--kind] <dir/>` → the directory, then its subtree drawn with `├── `, `└── `,
 * `│   ` and four-space indents. Lines are written as directories are listed, so a large
 * subtree is never held in memory beyond one directory's children per level.
 */
export const treeCommand = defineCommand({
  name: "tree",
  usage: "tree [--kind] <dir/>",
  summary: "draw a directory's subtree",
  args: { min: 1, max: 1 },
  flags: { kind: "bool" },
  async run({ positionals: [dir], flags }, ctx) {
    const key = parseDirKey(dir).key;
    // List the root before printing anything, so an absent directory prints only the error.
    const children = await sortedChildren(ctx.tree, key, ctx.signal);
    await writeLine(ctx.stdout, key);
    await drawChildren(ctx.tree, key, children, "", flags.kind === true, ctx);
    return 0;
  },
});

async function sortedChildren(tree: Tree, dir: string, signal: AbortSignal): Promise<ListChild[]> {
  const children: ListChild[] = [];
  for await (const child of listChildren(tree, dir, { signal })) children.push(child);
  return children.sort((a, b) => compareTreeNames(a.name, b.name));
}

async function drawChildren(
  tree: Tree,
  dir: string,
  children: ListChild[],
  indent: string,
  kind: boolean,
  ctx: Pick<CommandContext, "stdout" | "signal">,
): Promise<void> {
  for (const [i, child] of children.entries()) {
    const last = i === children.length - 1;
    await writeLine(ctx.stdout, formatTreeLine(indent, last, child, { kind }));
    if (child.kind !== "index") continue;
    const sub = dir + child.name;
    await drawChildren(
      tree,
      sub,
      await sortedChildren(tree, sub, ctx.signal),
      childIndent(indent, last),
      kind,
      ctx,
    );
  }
}
