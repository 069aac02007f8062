/**
 * Keeps MCP clients current: one watch of the whole tree per process (so a write from any process
 * — another server on the same etcd, the CLI, an agent — counts) turned into change events: the
 * tool catalogue (a write under /byteseek/tools/, to the policy, or to an MCP server's sync state,
 * where a person accepting a held upstream tool is written), the prompts (under
 * /byteseek/prompt/), the resource list (under /byteseek/memory/) and each key written. Events of
 * one tick are coalesced; a watch that fails is reopened from where it stopped.
 */

import type { Logger } from "pino";
import { MEMORY_DIR } from "../prompts/build.js";
import { dirs } from "../shared/keys.js";
import { POLICY_KEY } from "../tools/gate/policy.js";
import { SYNC_DIR } from "../tools/mcp/registry.js";
import { TOOLS_DIR } from "../tools/runtime.js";
import type { Tree, WatchBatch } from "../tree/types.js";

export interface TreeChange {
  tools: boolean;
  prompts: boolean;
  resources: boolean;
  /** Keys written or deleted (a deleted directory is its key, ending in '/'). */
  keys: string[];
}

export type ChangeListener = (change: TreeChange) => void;

export interface LiveTree {
  /** Starts the watch on first use; answers the unsubscribe. */
  subscribe(listener: ChangeListener): () => void;
  close(): void;
}

const PROMPT_DIR = dirs.prompts;
/** Most keys one notification round carries; a bulk import beyond it only refreshes the lists. */
const MAX_KEYS = 1000;

export function classify(batches: readonly WatchBatch[]): TreeChange {
  const change: TreeChange = { tools: false, prompts: false, resources: false, keys: [] };
  for (const b of batches)
    for (const e of b.events) {
      const k = e.key;
      if (
        k.startsWith(TOOLS_DIR) ||
        k === POLICY_KEY ||
        TOOLS_DIR.startsWith(k) ||
        k.startsWith(SYNC_DIR) ||
        SYNC_DIR.startsWith(k)
      )
        change.tools = true;
      if (k.startsWith(PROMPT_DIR) || PROMPT_DIR.startsWith(k)) change.prompts = true;
      if (k.startsWith(MEMORY_DIR) || MEMORY_DIR.startsWith(k)) change.resources = true;
      if (change.keys.length < MAX_KEYS) change.keys.push(k);
    }
  return change;
}

export function createLiveTree(tree: Tree, logger: Logger, options: { retryMs?: number } = {}): LiveTree {
  const listeners = new Set<ChangeListener>();
  const retryMs = options.retryMs ?? 1000;
  let controller: AbortController | undefined;
  let closed = false;
  let pending: WatchBatch[] = [];
  let flushing = false;

  function flush() {
    flushing = false;
    const change = classify(pending);
    pending = [];
    for (const l of listeners) {
      try {
        l(change);
      } catch (err) {
        logger.warn({ err }, "an MCP change listener failed");
      }
    }
  }

  async function follow(ac: AbortController) {
    let from = tree.revision() + 1;
    while (!ac.signal.aborted) {
      try {
        for await (const batch of tree.watch("/", { fromRev: from, signal: ac.signal })) {
          from = batch.rev + 1;
          pending.push(batch);
          if (!flushing) {
            flushing = true;
            setImmediate(flush);
          }
        }
        if (ac.signal.aborted) return;
      } catch (err) {
        if (ac.signal.aborted || closed) return;
        const code = (err as { code?: string }).code;
        // Compacted past where we stopped: what changed meanwhile is unknown, so say everything did.
        if (code === "TREE_COMPACTED") {
          from = tree.revision() + 1;
          pending.push({ rev: from - 1, events: [{ type: "deltree", key: "/", rev: from - 1, prevRev: 0 }] });
          if (!flushing) {
            flushing = true;
            setImmediate(flush);
          }
        } else logger.warn({ err }, "the MCP server's tree watch failed; reopening it");
      }
      await new Promise((res) => setTimeout(res, retryMs).unref());
    }
  }

  return {
    subscribe(listener) {
      listeners.add(listener);
      if (!controller && !closed) {
        controller = new AbortController();
        void follow(controller);
      }
      return () => {
        listeners.delete(listener);
      };
    },
    close() {
      closed = true;
      controller?.abort();
      listeners.clear();
    },
  };
}
