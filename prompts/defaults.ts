/**
 * The default prompt texts ship as `prompts/*.md` and are written into `/byteseek/prompt/<name>`
 * at first start when absent. At call time they are always read from the tree: editing a prompt
 * changes the next turn with no restart. A part deleted from the tree falls back to its shipped
 * file, read from disk then.
 */

import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { dirs } from "../shared/keys.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import { formatValue, str } from "../tree/value.js";

export const PROMPT_DIR = dirs.prompts;

/** The folder of the shipped `*.md` files, from the sources or from `dist/prompts/`. */
export function shippedPromptDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [here, join(here, "..", "..", "prompts")])
    if (existsSync(join(dir, "system.md"))) return dir;
  return here;
}

/** Reads the shipped default of one prompt part, or "" when there is none. */
export async function shippedPrompt(name: string): Promise<string> {
  try {
    return (await readFile(join(shippedPromptDir(), `${name}.md`), "utf8")).replace(/\n$/, "");
  } catch {
    return "";
  }
}

/** Writes every shipped prompt part that is absent from the tree; returns the names written. */
export async function seedPrompts(tree: Tree): Promise<string[]> {
  const files = (await readdir(shippedPromptDir())).filter((f) => f.endsWith(".md")).sort();
  const written: string[] = [];
  for (const file of files) {
    const name = file.slice(0, -3);
    try {
      await tree.set(PROMPT_DIR + name, str(await shippedPrompt(name)), { create: true });
      written.push(name);
    } catch (err) {
      if (!isTreeError(err, "TREE_EXISTS")) throw err;
    }
  }
  return written;
}

/** The text of a prompt part as it is in the tree now (its shipped default when absent). */
export async function readPrompt(tree: Tree, name: string): Promise<string> {
  const node = await tree.get(PROMPT_DIR + name);
  if (!node || node.kind === "index") return shippedPrompt(name);
  return formatValue(node.value);
}

/** Replaces `{{name}}` placeholders; unknown ones are left as they are. */
export function fillTemplate(text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{([a-z_]+)\}\}/g, (whole, name: string) => vars[name] ?? whole);
}
