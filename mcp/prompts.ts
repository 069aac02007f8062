/**
 * MCP prompts: `system` — the system prompt of the run's next turn, exactly as `kvspace prompt`
 * builds it — and every template a person keeps at /byteseek/prompt/mcp/<name>, whose `{{arg}}`
 * placeholders become the prompt's (required) arguments.
 */

import type { GetPromptResult, Prompt } from "@modelcontextprotocol/server";
import { dirs } from "../shared/keys.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";

export const MCP_PROMPTS_DIR = dirs.mcpPrompts;
export const SYSTEM_PROMPT = "system";

/**
 * A template's placeholders: `{{name}}` with any argument name a client may send (`arg1`,
 * `userName`, `file-path`, `a.b`), spaces inside the braces allowed. Each is a required argument;
 * a prompt asked for without one is an error, never the literal placeholder in its text.
 */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

function fillPlaceholders(text: string, args: Record<string, string>): string {
  return text.replace(PLACEHOLDER, (_whole, name: string) => args[name] as string);
}

const SYSTEM: Prompt = {
  name: SYSTEM_PROMPT,
  title: "byteseek system prompt",
  description:
    "The system prompt byteseek's own agent gets on this run's next turn (tools, guidelines, previous failures), as `kvspace prompt` prints it.",
};

interface Template {
  name: string;
  text: string;
  description?: string;
}

/** A template is a string, or json `{text, description?}`. */
function templateOf(name: string, node: { kind: string; value?: unknown }): Template | undefined {
  if (node.kind === "char/utf8") return { name, text: String((node.value as { value: unknown }).value) };
  if (node.kind === "json") {
    const v = (node.value as { value: unknown }).value as { text?: unknown; description?: unknown } | null;
    if (v && typeof v.text === "string")
      return {
        name,
        text: v.text,
        ...(typeof v.description === "string" ? { description: v.description } : {}),
      };
  }
  return undefined;
}

async function templates(tree: Tree): Promise<Template[]> {
  const out: Template[] = [];
  let after: string | undefined;
  try {
    do {
      const page = await tree.list(MCP_PROMPTS_DIR, { limit: 500, ...(after ? { after } : {}) });
      for (const c of page.children) {
        if (c.kind === "index" || c.name === SYSTEM_PROMPT) continue;
        const t = templateOf(c.name, c);
        if (t) out.push(t);
      }
      after = page.next;
    } while (after);
  } catch (err) {
    if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
  }
  return out;
}

export function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** The prompts a run may read: `system`, and the templates whose keys `readable` lets it read. */
export async function listPrompts(
  tree: Tree,
  readable: (key: string) => boolean = () => true,
): Promise<Prompt[]> {
  const list: Prompt[] = [SYSTEM];
  for (const t of await templates(tree)) {
    if (!readable(`${MCP_PROMPTS_DIR}${t.name}`)) continue;
    list.push({
      name: t.name,
      description: t.description ?? `The prompt kept at ${MCP_PROMPTS_DIR}${t.name}`,
      arguments: placeholders(t.text).map((a) => ({ name: a, required: true })),
    });
  }
  return list;
}

export type PromptAnswer =
  | { ok: true; result: GetPromptResult }
  | { ok: false; code: "not_found" | "missing_args"; message: string };

/** Fills a kept template, or says what is missing. (`system` is answered by the server, which knows the run.) */
export async function getTemplate(
  tree: Tree,
  name: string,
  args: Record<string, string>,
): Promise<PromptAnswer> {
  const node = await tree.get(`${MCP_PROMPTS_DIR}${name}`).catch((err: unknown) => {
    if (isTreeError(err, "TREE_INVALID_KEY")) return undefined;
    throw err;
  });
  const t = node && node.kind !== "index" ? templateOf(name, node) : undefined;
  if (!t)
    return {
      ok: false,
      code: "not_found",
      message: `no prompt named ${JSON.stringify(name)}; prompts/list shows what there is`,
    };
  const missing = placeholders(t.text).filter((a) => typeof args[a] !== "string");
  if (missing.length)
    return {
      ok: false,
      code: "missing_args",
      message: `prompt ${name} needs the argument(s): ${missing.join(", ")}`,
    };
  return {
    ok: true,
    result: {
      ...(t.description ? { description: t.description } : {}),
      messages: [{ role: "user", content: { type: "text", text: fillPlaceholders(t.text, args) } }],
    },
  };
}

export function systemPromptResult(text: string): GetPromptResult {
  return {
    description: SYSTEM.description!,
    messages: [{ role: "user", content: { type: "text", text } }],
  };
}
