/**
 * What the MCP server serves from: the tree (prompts, resources, the watch that keeps the
 * catalogue live), the catalogue, the call boundary and the system prompt. In-process it is the
 * runtime itself (`runtimeSource`); `byteseek mcp` on `KVSPACE=http://…` hands in one made of the
 * server's routes, so a call crosses the same boundary and lands in the same records either way.
 */
import { buildPrompt } from "../prompts/build.js";
import type { ImplKind, ToolAnnotations } from "../tools/catalogue/declaration.js";
import type { HostAsker } from "../tools/gate/asks.js";
import type { Runtime, ValidTool } from "../tools/runtime.js";
import type { ToolSearcher } from "../tools/search/searcher.js";
import type { ToolResult } from "../tools/types.js";
import type { Tree } from "../tree/types.js";

/** A declaration as the MCP list needs it (the fields `GET /v1/tools` answers). */
export interface ToolInfo {
  name: string;
  title?: string;
  description: string;
  params: Record<string, unknown>;
  enabled: boolean;
  confirm: boolean;
  impl: ImplKind;
  /** The built-in a builtin impl names. */
  ref?: string;
  annotations?: ToolAnnotations;
  /** Why the policy as it stands denies every call. */
  blocked?: string;
}

export interface SourceCallOptions {
  vid: string;
  approve?: boolean;
  /**
   * The person approved this call through the MCP host (elicitation), as `who`: in-process, the
   * approval is kept in the tree like every other (/byteseek/approval/<vid>/<n>, decided `once`),
   * and the call's record names it. Through a server's routes it is the `approve` flag.
   */
  approvedBy?: string;
  /** The credential of that approval: the MCP elicitation of which session. */
  approvedVia?: string;
  /**
   * The host can ask its person an upstream's question itself (it declared form elicitation): a
   * question asked during the call is put to it too (mcp/host-elicit.ts). In-process only: through
   * a server's routes the server's own channels answer it.
   */
  askHost?: HostAsker;
  signal?: AbortSignal;
}

export interface McpSource {
  tree: Tree;
  /** Every valid declaration, as run `vid` sees them. */
  tools(vid: string): Promise<ToolInfo[]>;
  /** One call through the boundary (validate, gate, execute, record, result). Never throws for a tool's failure. */
  call(name: string, args: unknown, options: SourceCallOptions): Promise<ToolResult>;
  /** The system prompt of `vid`'s next turn, exactly as `kvspace prompt` prints it. */
  systemPrompt(vid: string): Promise<string>;
  /** The names of the tools matching `query` that `vid` is offered, best first (the catalogue's index); absent: byteseek_find matches words. */
  search?(query: string, vid: string, limit: number): Promise<string[]>;
}

export function toolInfo(t: ValidTool): ToolInfo {
  const d = t.declaration;
  return {
    name: t.name,
    ...(d.title === undefined ? {} : { title: d.title }),
    description: d.description,
    params: d.params,
    enabled: d.enabled,
    confirm: d.confirm,
    impl: d.impl.kind,
    ...(d.impl.kind === "builtin" ? { ref: d.impl.ref } : {}),
    ...(d.annotations === undefined ? {} : { annotations: d.annotations }),
    ...(t.blocked === undefined ? {} : { blocked: t.blocked }),
  };
}

/** The source over an in-process runtime (the server's, or `byteseek mcp` on a folder or etcd). */
export function runtimeSource(tree: Tree, runtime: Runtime, searcher?: ToolSearcher): McpSource {
  return {
    tree,
    ...(searcher
      ? {
          async search(query: string, vid: string, limit: number) {
            return (await searcher.search(query, { vid, limit })).map((h) => h.name);
          },
        }
      : {}),
    async tools(vid) {
      return (await runtime.listTools(vid)).valid.map(toolInfo);
    },
    call(name, args, { approvedBy, approvedVia, approve, ...options }) {
      if (approvedBy === undefined)
        return runtime.call(name, args, { ...options, ...(approve === undefined ? {} : { approve }) });
      return runtime.call(name, args, {
        ...options,
        waitForApproval: true,
        onApproval(pending) {
          // the host approved the call, not what an upstream asks during it: that question is the
          // person's (put to the host as a question of its own when it can ask: askHost)
          if (pending.elicitation) return;
          runtime.approvals
            .decide(
              pending.key,
              { decision: "approve", scope: "once", reason: "approved in the MCP host" },
              approvedBy,
              approvedVia,
            )
            .catch(() => {
              // decided elsewhere meanwhile: that decision stands, and the call follows it
            });
        },
      });
    },
    async systemPrompt(vid) {
      return (await buildPrompt({ tree, runtime, vid })).system;
    },
  };
}
