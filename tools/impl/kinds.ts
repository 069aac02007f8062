/**
 * Execution of impl kinds, one entry per kind: how a call of that kind runs, and the powers it
 * needs whatever its arguments. Adding a kind to `ToolImpl` (declaration.ts) makes this map fail to
 * type-check until the kind has its entry here.
 */

import type { ToolCall } from "../call/hooks.js";
import type { ToolImpl } from "../catalogue/declaration.js";
import { ToolError } from "../errors.js";
import { netHosts } from "../gate/gate.js";
import type { Policy } from "../gate/policy.js";
import { grantOf, type Power } from "../gate/powers.js";
import type { McpClient } from "../mcp/client.js";
import type { HostLookup } from "../net/host-rules.js";
import type { KeptConnections } from "../net/kept-connections.js";
import type { BuiltinTool, ToolContext, ToolOutput } from "../types.js";
import { runBuiltinImpl } from "./builtin.js";
import { runHttpImpl } from "./http.js";
import { type LlmClient, runLlmImpl } from "./llm.js";
import { runShellImpl } from "./shell.js";

/** What the runtime hands every kind besides the call and its context. */
export interface ImplEnv {
  registry: ReadonlyMap<string, BuiltinTool>;
  policy: Policy;
  llm?: LlmClient | undefined;
  /** The MCP client `mcp` declarations call through (tools/mcp/). */
  mcp?: Pick<McpClient, "call" | "needs"> | undefined;
  /** The resolver http impls check names with (default: the system's). */
  lookup?: HostLookup | undefined;
  /** The connections http impls keep between calls (absent: each call opens and closes its own). */
  keptHttp?: KeptConnections | undefined;
}

export interface ImplRunner<I extends ToolImpl> {
  run(impl: I, call: ToolCall, ctx: ToolContext, env: ImplEnv): Promise<ToolOutput>;
  /** The powers every call needs, whatever its arguments (the catalogue marks a tool blocked without them). */
  needs(impl: I, powersOf: (ref: string) => readonly Power[]): readonly Power[];
}

type Runners = { [K in ToolImpl["kind"]]: ImplRunner<Extract<ToolImpl, { kind: K }>> };

export const IMPL_RUNNERS: Runners = {
  builtin: {
    run: (impl, call, ctx, env) => runBuiltinImpl(impl, call.args, ctx, env.registry),
    needs: (impl, powersOf) => powersOf(impl.ref),
  },
  shell: {
    run: (impl, call, ctx) => runShellImpl(impl, call.args, ctx, call.declaration.params),
    needs: () => ["exec"],
  },
  http: {
    run: (impl, call, ctx, env) =>
      runHttpImpl(impl, call.args, ctx, netHosts(env.policy, grantOf(env.policy.grants, call.vid).grant), {
        ...(env.lookup ? { lookup: env.lookup } : {}),
        // a kept connection serves later calls of the same declaration in the same run only
        ...(env.keptHttp
          ? { kept: { connections: env.keptHttp, scope: JSON.stringify([call.vid, call.key]) } }
          : {}),
      }),
    needs: () => [],
  },
  llm: {
    run: (impl, call, ctx, env) => runLlmImpl(impl, call.args, ctx, env.llm),
    needs: () => ["model"],
  },
  mcp: {
    run(impl, call, ctx, env) {
      if (!env.mcp)
        throw new ToolError(
          "mcp_unavailable",
          "this byteseek has no MCP client to call upstream servers with",
        );
      return env.mcp.call(impl, call.args, ctx);
    },
    // exec or net, by the registered server's entry: the gate reads it (GateInput.mcpNeeds)
    needs: () => [],
  },
};

/** The runner of an impl, typed on the impl's own kind. */
export function runnerOf<I extends ToolImpl>(impl: I): ImplRunner<I> {
  return IMPL_RUNNERS[impl.kind] as unknown as ImplRunner<I>;
}

/** Runs a call by its declaration's impl kind. */
export function runImpl(call: ToolCall, ctx: ToolContext, env: ImplEnv): Promise<ToolOutput> {
  const impl = call.declaration.impl;
  return runnerOf(impl).run(impl, call, ctx, env);
}
