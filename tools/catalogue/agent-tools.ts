/**
 * Tools runs declare (`/byteseek/tools/<name>` written by a run: the node's `vid`), and the two
 * rules that keep one run's catalogue from becoming everyone's (issue 33, item 4):
 *
 * - **Bounded.** A run may have at most `agentTools.maxPerRun` declarations, of at most
 *   `agentTools.maxBytesPerRun` bytes in all; a declaration beyond either is not written, and the
 *   model is told what to remove or reuse instead.
 * - **Accepted before shared.** With `agentTools.share: "accepted"` (the default), a run's tool is
 *   offered to, and callable by, other runs only once a person accepts that very version: the
 *   acceptance at `/byteseek/tool-accept/<name>` names the declaration's hash, so a later change by
 *   the run needs accepting again. The declaring run keeps using its own tool; a person's write of
 *   the declaration makes it theirs (ownership.ts), offered to every run.
 */
import { z } from "zod";
import { dirs, keys } from "../../shared/keys.js";
import { childrenOf } from "../../tree/children.js";
import type { Tree, TreeNode } from "../../tree/types.js";
import type { TreeValue } from "../../tree/value.js";
import { docFamily, writeDoc } from "../doc/read-write.js";
import { AgentToolError, ToolError } from "../errors.js";
import type { AgentToolsPolicy } from "../gate/policy.js";
import { hashOf } from "./hash.js";

/** Where a person's acceptances of runs' tools live (written by the runtime for a person alone). */
export const ACCEPT_DIR = dirs.toolAccept;
const TOOLS_DIR = dirs.tools;

/** A person's acceptance of one version of a run's tool (`/byteseek/tool-accept/<name>`), as written. */
const AcceptanceFields = z.object({
  /** The hash of the declaration accepted (tools/catalogue/hash.ts, as the records' `decl.hash`). */
  hash: z.string(),
  /** The run that had written it. */
  owner: z.string(),
  by: z.string(),
  ts: z.number(),
});
/** As read back: the hash is what accepts; the rest says who and when. */
const Acceptance = AcceptanceFields.partial({ owner: true, by: true, ts: true }).loose();
/** The acceptance family (tools/doc/docs.ts names it). */
export const AcceptanceDoc = docFamily<typeof Acceptance, z.input<typeof AcceptanceFields>>(
  "a person's acceptance of a run's tool",
  Acceptance,
);

/**
 * The hash an acceptance accepts. One that does not read as an acceptance accepts nothing (its tool
 * stays held from other runs) rather than failing the listing of every run's catalogue.
 */
function acceptedHashOf(value: TreeValue | undefined): string | undefined {
  if (value?.kind !== "json") return undefined;
  const parsed = Acceptance.safeParse(value.value);
  return parsed.success ? parsed.data.hash : undefined;
}

/** The declaration name of `key`, when it is one (`/byteseek/tools/<name>`). */
function declName(key: string): string | undefined {
  if (!key.startsWith(TOOLS_DIR)) return undefined;
  const name = key.slice(TOOLS_DIR.length);
  return name === "" || name.includes("/") ? undefined : name;
}

/** The accepted hash of `name`, if a person accepted a version of it. */
export async function acceptedHash(tree: Tree, name: string): Promise<string | undefined> {
  const node = await tree.get(keys.toolAccept(name)).catch(() => undefined);
  return node?.kind === "index" ? undefined : acceptedHashOf(node?.value);
}

/** Every acceptance, by tool name (read once per catalogue listing). */
export async function readAcceptances(tree: Tree): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const c of childrenOf(tree, ACCEPT_DIR)) {
    const hash = c.kind === "index" ? undefined : acceptedHashOf(c.value);
    if (hash !== undefined) out.set(c.name, hash);
  }
  return out;
}

/**
 * Why run `vid` may not use another run's tool `name` (declared by `owner`, hash `hash`), or
 * undefined when it may: written for the model, with the person's command.
 */
export function notAcceptedReason(name: string, owner: string): string {
  return `${name} was declared by run ${owner}, and no person has accepted this version of it for other runs, so it is held: ask the user to review it (kvspace tools accept ${name}), or use another tool`;
}

/** Whether the policy keeps another run's tool from run `vid` until accepted. */
export function heldFromOthers(
  policy: AgentToolsPolicy,
  owner: string | undefined,
  vid: string,
  hash: string,
  accepted: string | undefined,
): boolean {
  return policy.share === "accepted" && owner !== undefined && owner !== vid && accepted !== hash;
}

const sizeOf = (v: TreeValue): number =>
  Buffer.byteLength(v.kind === "json" ? JSON.stringify(v.value) : String(v.value));

/**
 * Refuses run `vid` writing declaration `key` when the run's declarations would then be more than
 * the policy allows, in count or bytes (a change to one of its own counts its new size only).
 */
export async function checkCatalogueRoom(
  tree: Tree,
  policy: AgentToolsPolicy,
  vid: string,
  key: string,
  next: TreeValue,
): Promise<void> {
  const name = declName(key);
  if (name === undefined) return;
  let count = 0;
  let bytes = 0;
  let after: string | undefined;
  do {
    let page: Awaited<ReturnType<Tree["list"]>>;
    try {
      page = await tree.list(TOOLS_DIR, { limit: 1000, ...(after ? { after } : {}) });
    } catch (err) {
      if ((err as { code?: string }).code === "TREE_NOT_FOUND") break;
      throw err;
    }
    for (const c of page.children) {
      if (c.kind === "index" || c.name === name) continue;
      const node = (c.value === undefined ? await tree.get(`${TOOLS_DIR}${c.name}`) : c) as
        | TreeNode
        | undefined;
      if (!node || node.kind === "index" || node.vid !== vid) continue;
      count++;
      bytes += sizeOf(node.value);
    }
    after = page.next;
  } while (after);
  const size = sizeOf(next);
  const over =
    count + 1 > policy.maxPerRun
      ? `${count} declarations already, and the policy allows ${policy.maxPerRun} per run (agentTools.maxPerRun)`
      : bytes + size > policy.maxBytesPerRun
        ? `${bytes} bytes of declarations already, and this one is ${size} more than the ${policy.maxBytesPerRun} the policy allows per run (agentTools.maxBytesPerRun)`
        : undefined;
  if (over)
    throw new ToolError(
      "catalogue_full",
      `${name} was not declared: run ${vid} has ${over}. Remove a tool you declared and no longer need (tree.del /byteseek/tools/<name>), make this one smaller, or find an existing tool that does the job (tools.search); a person may raise the limit.`,
      {
        details: {
          key,
          count,
          bytes,
          size,
          maxPerRun: policy.maxPerRun,
          maxBytesPerRun: policy.maxBytesPerRun,
        },
      },
    );
}

/** What a person accepted. */
export interface AgentToolAcceptance {
  name: string;
  owner: string;
  hash: string;
}

/**
 * A person accepts run's tool `name` as it is now (with `hash`: only if it is still the version
 * they reviewed), so every run is offered it; a later change by the run needs accepting again.
 */
export async function acceptAgentTool(
  tree: Tree,
  name: string,
  options: { by: string; hash?: string },
): Promise<AgentToolAcceptance> {
  const node = await tree.get(`${TOOLS_DIR}${name}`).catch(() => undefined);
  if (!node || node.kind === "index")
    throw new AgentToolError("AGENT_TOOL_NOT_FOUND", `there is no tool ${name} (${TOOLS_DIR}${name})`, {
      name,
    });
  if (node.vid === undefined)
    throw new AgentToolError(
      "AGENT_TOOL_NOT_AGENTS",
      `${name} was written by a person, so every run is offered it already; nothing to accept`,
      { name },
    );
  const hash = hashOf(node.kind === "json" ? node.value.value : node.value.value);
  if (options.hash !== undefined && options.hash !== hash)
    throw new AgentToolError(
      "AGENT_TOOL_STALE",
      `${name} changed since it was reviewed (now ${hash.slice(0, 12)}); review it again`,
      { name, hash },
    );
  await writeDoc(tree, AcceptanceDoc, keys.toolAccept(name), {
    hash,
    owner: node.vid,
    by: options.by,
    ts: Date.now(),
  });
  return { name, owner: node.vid, hash };
}
