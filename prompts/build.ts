/**
 * Builds what the model gets on a turn — the system text and the tool schemas — from the tree,
 * every time: the template at /byteseek/prompt/system, the tool list from every enabled, valid,
 * callable declaration with a snippet, those tools' guidelines, recalled memory, and the failed
 * calls of the previous turn. Nothing about tools is written in the template.
 */
import { dirs, keys } from "../shared/keys.js";
import type { Runtime, ValidTool } from "../tools/runtime.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import { formatValue } from "../tree/value.js";
import { fillTemplate, readPrompt } from "./defaults.js";
import { SEARCH_TOOL, selectTools } from "./tool-list.js";

export const MEMORY_DIR = dirs.memory;
/** The last turn of a run: `{turn, records: [record keys]}`, written by the agent loop. */
export const lastTurnKey = keys.runTurn;

/** A tool as offered to the model: our dotted name, its description and its JSON Schema. */
export interface PromptTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface BuiltPrompt {
  system: string;
  tools: PromptTool[];
  /** `deferred`: only some offered tools went in full (the policy's toolList); `all`: every one. */
  mode: "all" | "deferred";
  /** Offered tools not sent with their schemas (deferred mode): the model finds them with tools.search. */
  deferred: number;
}

export interface BuildPromptOptions {
  tree: Tree;
  runtime: Pick<Runtime, "listTools" | "workspace">;
  vid: string;
  /** The user's input of this turn, for memory recall. */
  input?: string;
  /** Defaults to now. */
  date?: Date;
  /** At most this many memory lines (default 20). */
  memoryLines?: number;
  /** Tools tools.search answered earlier in this turn: sent in full from the next step (deferred mode). */
  found?: ReadonlySet<string>;
}

const SECTIONS = ["tools", "guidelines", "memory", "previous"] as const;

export async function buildPrompt(options: BuildPromptOptions): Promise<BuiltPrompt> {
  const { tree, runtime, vid } = options;
  const [template, catalogue, memory, previous, headers] = await Promise.all([
    readPrompt(tree, "system"),
    runtime.listTools(vid),
    recallMemory(tree, options.input ?? "", options.memoryLines ?? 20),
    previousFailures(tree, vid),
    Promise.all(SECTIONS.map((s) => readPrompt(tree, `${s}-header`))),
  ]);
  const offered = catalogue.valid
    .filter((t) => t.declaration.enabled && t.declaration.snippet && !t.blocked)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const chosen = selectTools(offered, catalogue.toolList, options.found);
  const more = chosen.unlisted > 0 ? [`- … and ${chosen.unlisted} more: find them with ${SEARCH_TOOL}`] : [];
  const rest =
    chosen.lines.length + more.length > 0 ? [`Also available (call ${SEARCH_TOOL} to use one):`] : [];
  const bodies: Record<(typeof SECTIONS)[number], string[]> = {
    tools: [
      ...chosen.full.map((t) => `- ${t.name}: ${t.declaration.snippet}`),
      ...rest,
      ...chosen.lines,
      ...more,
    ],
    guidelines: guidelinesOf(chosen.full).map((g) => `- ${g}`),
    memory,
    previous,
  };
  const vars: Record<string, string> = {
    workspace: runtime.workspace,
    date: (options.date ?? new Date()).toISOString().slice(0, 10),
    vid,
  };
  SECTIONS.forEach((s, i) => {
    vars[s] = bodies[s].length === 0 ? "" : [headers[i], ...bodies[s]].filter((l) => l !== "").join("\n");
  });
  // A section the template does not place goes at its end, so editing the template never drops one.
  let text = fillTemplate(template, vars);
  for (const s of SECTIONS) if (!template.includes(`{{${s}}}`) && vars[s]) text += `\n\n${vars[s]}`;
  return {
    system: text.replace(/\n{3,}/g, "\n\n").trim(),
    tools: chosen.full.map(toPromptTool),
    mode: chosen.mode,
    deferred: offered.length - chosen.full.length,
  };
}

function toPromptTool(t: ValidTool): PromptTool {
  return { name: t.name, description: t.declaration.description, parameters: t.declaration.params };
}

/** The guidelines of the offered tools, each once, in tool order. */
function guidelinesOf(tools: ValidTool[]): string[] {
  const seen = new Set<string>();
  for (const t of tools) for (const g of t.declaration.guidelines ?? []) seen.add(g.trim());
  seen.delete("");
  return [...seen];
}

/**
 * The memory entries as of one revision, per tree: nothing changed since, so neither did they.
 * Keyed weakly on the tree and checked against its revision, it holds nothing a caller could
 * observe (as the schema memo in tools/catalogue/declaration.ts).
 */
const memoryMemo = new WeakMap<Tree, { rev: number; entries: Array<{ name: string; value: string }> }>();

async function memoryEntries(tree: Tree): Promise<Array<{ name: string; value: string }>> {
  const rev = tree.syncRevision ? await tree.syncRevision() : tree.revision();
  const hit = memoryMemo.get(tree);
  if (hit?.rev === rev) return hit.entries;
  const entries: Array<{ name: string; value: string }> = [];
  let after: string | undefined;
  try {
    do {
      const page = await tree.list(MEMORY_DIR, { limit: 1000, ...(after ? { after } : {}) });
      for (const c of page.children)
        if (c.kind !== "index" && c.value !== undefined)
          entries.push({ name: c.name, value: formatValue(c.value) });
      after = page.next;
    } while (after);
  } catch (err) {
    if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
  }
  memoryMemo.set(tree, { rev, entries });
  return entries;
}

/** `key = value` lines of memory entries whose key or value contains the input or is contained in it. */
async function recallMemory(tree: Tree, input: string, cap: number): Promise<string[]> {
  const needle = input.trim().toLowerCase();
  if (needle === "") return [];
  const lines: string[] = [];
  for (const { name, value } of await memoryEntries(tree)) {
    if (matches(name.toLowerCase(), needle) || matches(value.toLowerCase(), needle)) {
      lines.push(`${name} = ${value.length > 300 ? `${value.slice(0, 300)}…` : value}`);
      if (lines.length >= cap) break;
    }
  }
  return lines;
}

function matches(text: string, input: string): boolean {
  return text !== "" && (text.includes(input) || input.includes(text));
}

/** One line per call of the previous turn whose kind was not ok: record key, tool, kind, message. */
async function previousFailures(tree: Tree, vid: string): Promise<string[]> {
  const turn = await tree.get(lastTurnKey(vid));
  if (turn?.kind !== "json") return [];
  const keys = (turn.value.value as { records?: unknown }).records;
  if (!Array.isArray(keys)) return [];
  const nodes = await Promise.all(
    keys.filter((k): k is string => typeof k === "string").map((k) => tree.get(k)),
  );
  const lines: string[] = [];
  nodes.forEach((node, i) => {
    if (node?.kind !== "json") return;
    const r = node.value.value as { name?: string; kind?: string; text?: string };
    if (r.kind === "ok") return;
    const message = (r.text ?? "").split("\n")[0]!.slice(0, 300);
    lines.push(`- ${keys[i]} ${r.name ?? "?"} ${r.kind ?? "?"}: ${message}`);
  });
  return lines;
}
