/**
 * The composition root shared by the server and the CLI: the built-in tools, the runtime over the
 * tree, the shipped declarations and prompts seeded, and the agent with its model provider. Only
 * callers (server/main.ts, cli/) read the environment; they hand it in.
 */
import type { Logger } from "pino";
import { AgentError } from "../agent/errors.js";
import { killAt } from "../agent/kill-at.js";
import { type ClientLlmSettings, resolveLlmConfig } from "../agent/llm-config.js";
import { type Agent, createAgent } from "../agent/loop.js";
import { type ModelChoices, modelChoices } from "../agent/model-choices.js";
import { createProvider, type ProviderDeps } from "../agent/providers/index.js";
import type { Provider } from "../agent/providers/types.js";
import { type BuiltPrompt, buildPrompt } from "../prompts/build.js";
import { seedPrompts } from "../prompts/defaults.js";
import { createCheckedTree } from "../tools/catalogue/checked-tree.js";
import { seedTools } from "../tools/catalogue/seed.js";
import { createEditTools, sweepTempFiles } from "../tools/edit/index.js";
import type { LlmClient } from "../tools/impl/llm.js";
import type { McpClient } from "../tools/mcp/client.js";
import { createLazyMcpClient } from "../tools/mcp/lazy-client.js";
import { withoutToken } from "../tools/process/secrets.js";
import { createRuntime, type Runtime } from "../tools/runtime.js";
import { createSandboxRunner, type SandboxRunner } from "../tools/sandbox/runner.js";
import { createToolSearcher, type ToolSearcher } from "../tools/search/searcher.js";
import { createToolSearchTool } from "../tools/search/tool.js";
import { createShellTools } from "../tools/shell/index.js";
import { createTreeTools } from "../tools/tree/tools.js";
import type { BuiltinTool } from "../tools/types.js";
import type { Tree } from "../tree/types.js";

/** Providers kept open for turns that bring their own model settings. */
const CLIENT_PROVIDERS = 8;

export interface ByteseekOptions {
  tree: Tree;
  /** The root the file tools may touch. */
  workspace: string;
  logger: Logger;
  /** The environment the model settings are read from (BYTESEEK_LLM_*); the tree is the fallback. */
  env?: NodeJS.ProcessEnv;
  /** Write the shipped declarations, prompts and policy (default: as `BYTESEEK_SEED` in `env` says, on). */
  seed?: boolean;
  maxSteps?: number;
  providerDeps?: ProviderDeps;
  /** Remove temp files a killed writer left in the workspace (default true). */
  sweep?: boolean;
  /** The embedded store's folder: no file tool touches it, even when it lies in the workspace. */
  storePath?: string;
}

export interface Byteseek {
  /** The tree handed in, its declaration, policy and MCP server writes checked (tools/catalogue/checked-tree.ts). */
  tree: Tree;
  runtime: Runtime;
  agent: Agent;
  builtins: readonly BuiltinTool[];
  /** The upstream MCP servers (`/byteseek/mcp/`): started on first use, stopped by close(). */
  mcp: McpClient;
  /** The catalogue's search, as run `vid` sees it (tools.search, `GET /v1/tools?search=`, kvspace). */
  search: ToolSearcher;
  /** The sandbox every command starts in (`BYTESEEK_BWRAP` names another bubblewrap binary). */
  sandbox: SandboxRunner;
  /** What the model would get next for `vid`: the system text and the tool schemas. */
  prompt(vid: string, input?: string): Promise<BuiltPrompt>;
  /** The models a turn may name (the page's model picker), the configured one first. */
  models(): Promise<ModelChoices>;
  /**
   * Stores pending usage counters, removes the folder of call output and closes the model
   * connections (not the tree: its opener closes it).
   */
  close(): Promise<void>;
}

/**
 * Every built-in. `searcher` answers `tools.search`; it is bound late, since it reads the catalogue
 * through the runtime these built-ins go into (without one, as when only seeding, the tool says so).
 */
export function createBuiltins(searcher: () => ToolSearcher | undefined = () => undefined): BuiltinTool[] {
  return [...createEditTools(), ...createShellTools(), ...createTreeTools(), createToolSearchTool(searcher)];
}

/** The built-ins by the `ref` a declaration's `builtin` impl names. */
export function builtinMap(builtins: readonly BuiltinTool[] = createBuiltins()): Map<string, BuiltinTool> {
  return new Map(builtins.map((b) => [b.ref, b]));
}

/**
 * Whether an entry point seeds the store it opens: `BYTESEEK_SEED` unset, empty or `1` (the
 * default) seeds, `0` does not (a tree used as a plain key-value store, as upstream kvspace's
 * scripts expect). Anything else is refused, naming the variable.
 */
export function seedWanted(env: NodeJS.ProcessEnv): boolean {
  const value = env.BYTESEEK_SEED;
  if (value === undefined || value === "" || value === "1") return true;
  if (value === "0") return false;
  throw new AgentError(
    "AGENT_BAD_SETTING",
    `BYTESEEK_SEED must be 1 (write the shipped prompts, tools and policy into the store on open) or 0 (do not), got ${JSON.stringify(value)}`,
    { setting: "BYTESEEK_SEED" },
  );
}

/**
 * Writes what byteseek ships into the tree: the tool declarations and the default policy (as
 * `seedTools` upgrades them), and every prompt part that is absent. Idempotent; every entry point
 * (server, `byteseek run|chat|mcp`, `kvspace`) runs it on open.
 */
export async function seedStore(
  tree: Tree,
  options: { builtins?: readonly BuiltinTool[]; logger?: Logger } = {},
): Promise<void> {
  const { builtins = createBuiltins(), logger } = options;
  await seedTools({ tree, builtins, ...(logger ? { logger } : {}) });
  await seedPrompts(tree);
}

export async function createByteseek(options: ByteseekOptions): Promise<Byteseek> {
  const { logger } = options;
  const env = options.env ?? {};
  let search: ToolSearcher | undefined;
  const builtins = createBuiltins(() => search);
  // every writer through byteseek — tool calls, HTTP, MCP — has its declarations and policy checked
  const tree = createCheckedTree(options.tree, { builtins: builtinMap(builtins) });
  if (options.seed ?? seedWanted(env)) await seedStore(tree, { builtins, logger });
  // A long-lived process sweeps once at start; a one-shot CLI call skips the walk of the workspace.
  const removed = options.sweep === false ? 0 : await sweepTempFiles(options.workspace).catch(() => 0);
  if (removed > 0) logger.info({ removed }, "removed temp files left by an interrupted write");

  // One provider per configuration: the settings are read on every turn (the tree may change).
  let current: { signature: string; provider: Provider } | undefined;
  // Turns that bring their own settings (a client's) share providers by configuration; the
  // least recently used closes once there are more than a few (a closing one finishes its requests).
  const clients = new Map<string, Provider>();
  async function provider(client?: ClientLlmSettings): Promise<Provider> {
    const config = await resolveLlmConfig({ env, tree, ...(client ? { client } : {}) });
    const signature = JSON.stringify([config, config.key ?? ""]);
    if (client) {
      const known = clients.get(signature);
      clients.delete(signature);
      const p = known ?? createProvider(config, { logger, ...options.providerDeps });
      clients.set(signature, p);
      for (const [sig, old] of clients) {
        if (clients.size <= CLIENT_PROVIDERS) break;
        clients.delete(sig);
        old.close().catch((err: unknown) => logger.warn({ err }, "closing a model connection failed"));
      }
      return p;
    }
    if (current?.signature !== signature) {
      const old = current?.provider;
      current = { signature, provider: createProvider(config, { logger, ...options.providerDeps }) };
      if (old) void old.close();
    }
    return current.provider;
  }

  const llm: LlmClient = {
    async complete(prompt, args, signal) {
      const p = await provider();
      const reply = await p.complete(
        { system: prompt, messages: [{ role: "user", content: JSON.stringify(args) }], tools: [] },
        { signal },
      );
      return reply.text;
    },
    // an upstream MCP server's sampling (tools/mcp/upstream-requests.ts): text in, text out, no tools
    async sample(request, signal) {
      const p = await provider();
      // an upstream asks for what it likes: it gets no more than the run's own steps may take
      const { maxTokens } = await resolveLlmConfig({ env, tree });
      const reply = await p.complete(
        {
          system: request.system ?? "",
          messages: request.messages.map((m) =>
            m.role === "user"
              ? { role: "user" as const, content: m.text }
              : { role: "assistant" as const, text: m.text, toolCalls: [] },
          ),
          tools: [],
          maxTokens: Math.min(request.maxTokens, maxTokens),
        },
        { signal },
      );
      return {
        text: reply.text,
        model: p.model,
        stop: reply.stopReason === "length" ? "maxTokens" : "endTurn",
        tokens: { input: reply.usage.inputTokens, output: reply.usage.outputTokens },
      };
    },
  };
  // Commands take their allow-listed variables from the environment handed in (the server's,
  // secrets included), never BYTESEEK_TOKEN, whichever entry point made this runtime.
  const commandEnv = withoutToken(options.env ?? process.env);
  const sandbox = createSandboxRunner(env.BYTESEEK_BWRAP ? { bwrap: env.BYTESEEK_BWRAP } : {});
  // made at its first use: a run with no MCP server registered never loads the client or the SDK
  const mcp = createLazyMcpClient({
    tree,
    logger: logger.child({ part: "mcp-client" }),
    workspace: options.workspace,
    env: commandEnv,
    sandbox,
    ...(options.storePath ? { hiddenPaths: [options.storePath] } : {}),
  });
  const failpoint = killAt(env.BYTESEEK_KILL_AT);
  const runtime = createRuntime({
    tree,
    builtins,
    ...(failpoint ? { failpoint } : {}),
    logger,
    workspace: options.workspace,
    llm,
    mcp,
    ...(options.storePath ? { hiddenPaths: [options.storePath] } : {}),
    env: commandEnv,
    sandbox,
  });
  search = createToolSearcher({
    tree,
    listTools: (vid) => runtime.listTools(vid),
    onError: (err) =>
      logger.warn({ err }, "the tool index lost the tree's watch; it reads the catalogue again"),
  });
  const agent = createAgent({
    tree,
    runtime,
    logger,
    provider,
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
  });
  return {
    tree,
    runtime,
    agent,
    builtins,
    mcp,
    search,
    sandbox,
    prompt: (vid, input) => buildPrompt({ tree, runtime, vid, ...(input !== undefined ? { input } : {}) }),
    models: () => modelChoices(env, tree),
    async close() {
      search?.close();
      // upstream servers first: no process outlives byteseek
      await mcp.close();
      await runtime.close();
      await sandbox.close();
      await current?.provider.close();
      await Promise.all([...clients.values()].map((p) => p.close()));
    },
  };
}
