/**
 * The tool runtime: wires its three parts over one tree — the catalogue (catalogue.ts: which tools
 * exist), the call pipeline (call-pipeline.ts: validate → gate → execute → record) and the execution
 * of impl kinds (execute.ts, impl/kinds.ts).
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { Tree } from "../tree/types.js";
import { createCallPipeline } from "./call/call-pipeline.js";
import { createExecutor } from "./call/execute.js";
import type { ToolHooks } from "./call/hooks.js";
import { createIntentPlanner, createIntentTiming } from "./call/intent-plan.js";
import { createKeyedLock } from "./call/locks.js";
import type { CallOptions, Failpoint, IntentWait } from "./call/pipeline-types.js";
import { createCatalogue, type ToolCatalogue } from "./catalogue/catalogue.js";
import { type Approvals, createApprovals } from "./gate/approvals.js";
import { createPolicyReader } from "./gate/policy.js";
import { builtinPowers, type Power } from "./gate/powers.js";
import { builtinRegistry } from "./impl/builtin.js";
import type { LlmClient } from "./impl/llm.js";
import type { McpClient } from "./mcp/client.js";
import type { HostLookup } from "./net/host-rules.js";
import { createKeptConnections } from "./net/kept-connections.js";
import { createScratchRoot } from "./process/scope.js";
import { type SandboxState, sandboxState } from "./sandbox/probe.js";
import { createSandboxRunner, type SandboxRunner } from "./sandbox/runner.js";
import type { BuiltinTool, ToolResult } from "./types.js";

export type { CallOptions, Failpoint, IntentWait } from "./call/pipeline-types.js";
export type { DeclRef, InvalidTool, ToolCatalogue, ValidTool } from "./catalogue/catalogue.js";
export { TOOLS_DIR } from "./catalogue/catalogue.js";

export interface RuntimeOptions {
  tree: Tree;
  /** The shipped functions `builtin` declarations may name. */
  builtins: readonly BuiltinTool[];
  logger: Logger;
  /** The root the file tools may touch (resolved to its real path once). */
  workspace: string;
  /** The model, for `llm` tools; without it they answer "no model configured". */
  llm?: LlmClient;
  /**
   * Folders no file tool reads, writes, lists or searches whatever the policy says: the embedded
   * store's folder (its files hold the policy and every denied key), when it lies in a root.
   */
  hiddenPaths?: readonly string[];
  /** Run in order around every resolved call; see ToolHooks for what they may do. */
  hooks?: ToolHooks | readonly ToolHooks[];
  /**
   * Either way a call answers once its record and its usage counters are stored: they are one
   * store write (tools/records/usage.ts). Accepted so callers naming it keep working; `flush()` likewise.
   */
  usageWrites?: "background" | "await";
  /**
   * The environment commands take their allow-listed variables (and the policy's passEnv) from: the
   * server's, as read at start before its secrets were withdrawn. Default: process.env.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the server's private folder of call output and temp folders is made (default: the OS temp dir). */
  scratchParent?: string;
  /** The MCP client `mcp` declarations call through (tools/mcp/); without it they answer mcp_unavailable. */
  mcp?: Pick<McpClient, "call" | "needs"> & Partial<Pick<McpClient, "held" | "allowed">>;
  /** The resolver http impls check host names with before connecting (default: the system's). */
  lookup?: HostLookup;
  /** Starts commands in the sandbox (default: bubblewrap on PATH; the runtime closes the one it made). */
  sandbox?: SandboxRunner;
  /** Fault injection for the chaos test and bench only (call-pipeline.ts `Failpoint`). */
  failpoint?: Failpoint;
  /** Told, per call that executes, how long its path waited for its started record (IntentWait). */
  onIntentWait?: IntentWait;
}

export interface Runtime {
  /** The one call boundary (resolve → validate → gate → execute → after → record → result). Never throws. */
  call(name: string, args: unknown, options: CallOptions): Promise<ToolResult>;
  /**
   * Every declaration under /byteseek/tools/, valid ones by name, invalid ones with their problems.
   * With `vid`, a tool needing a power that run does not hold is `blocked` (else: the default grant).
   */
  listTools(vid?: string): Promise<ToolCatalogue>;
  /** Waits until the usage counters of every call answered so far are stored (before closing the tree). */
  flush(): Promise<void>;
  /** flush(), then removes the server's folder of call output (every call's, at the latest now). */
  close(): Promise<void>;
  /** Real path of the workspace handed to the tools. */
  readonly workspace: string;
  /** The approvals kept in the tree (request, wait, decide), shared with every other caller. */
  readonly approvals: Approvals;
  /** Whether commands run sandboxed now (the policy's `sandbox`, and whether bubblewrap works here). */
  sandboxState(): Promise<SandboxState>;
}

/** Builds the tool runtime over a tree. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const { tree, logger } = options;
  const registry = builtinRegistry(options.builtins);
  const hooks: readonly ToolHooks[] = options.hooks
    ? Array.isArray(options.hooks)
      ? (options.hooks as readonly ToolHooks[])
      : [options.hooks as ToolHooks]
    : [];
  const workspace = realWorkspace(options.workspace);
  const hidden = (options.hiddenPaths ?? []).map(realWorkspace);
  const readPolicy = createPolicyReader(tree);
  const approvals = createApprovals(tree);
  const powersOf = (ref: string): readonly Power[] => builtinPowers(ref, registry.get(ref)?.powers);
  const scratchRoot = createScratchRoot(options.scratchParent);
  const sandbox = options.sandbox ?? createSandboxRunner();
  const mcpHeld = options.mcp?.held;
  const catalogue = createCatalogue({
    tree,
    registry,
    readPolicy,
    powersOf,
    mcpNeeds: options.mcp?.needs,
    mcpHeld,
  });
  const keptHttp = createKeptConnections();
  const execute = createExecutor({
    tree,
    logger,
    registry,
    llm: options.llm,
    mcp: options.mcp,
    lookup: options.lookup,
    keptHttp,
    workspace,
    hidden,
    commandEnv: options.env ?? process.env,
    scratchRoot,
    fileLocks: createKeyedLock(),
    sandbox,
    approvals,
    // what the prompt lists (prompts/build.ts): enabled, with a snippet, not blocked for the run
    offered: async (vid) =>
      new Set(
        (await catalogue.listTools(vid)).valid
          .filter((t) => t.declaration.enabled && t.declaration.snippet && !t.blocked)
          .map((t) => t.name),
      ),
  });
  const pipeline = createCallPipeline({
    tree,
    logger,
    hooks,
    catalogue,
    readPolicy,
    execute,
    approvals,
    workspace,
    hidden,
    powersOf,
    runLocks: createKeyedLock(),
    mcpNeeds: options.mcp?.needs,
    mcpAllowed: options.mcp?.allowed,
    planIntent: createIntentPlanner({ registry, workspace, logger, tree }),
    intentTiming: createIntentTiming(registry),
    failpoint: options.failpoint,
    onIntentWait: options.onIntentWait,
  });

  async function close(): Promise<void> {
    await pipeline.flush();
    await keptHttp.close();
    await scratchRoot.remove();
    if (!options.sandbox) await sandbox.close();
  }

  return {
    call: pipeline.call,
    listTools: catalogue.listTools,
    flush: pipeline.flush,
    close,
    workspace,
    approvals,
    async sandboxState() {
      const loaded = await readPolicy();
      // an invalid policy refuses every call: nothing runs, sandboxed or not
      return sandboxState(
        loaded.ok ? loaded.policy.sandbox : "on",
        () => sandbox.status(),
        () => sandbox.caps(),
      );
    },
  };
}

function realWorkspace(workspace: string): string {
  const abs = path.resolve(workspace);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}
