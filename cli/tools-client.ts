/**
 * What `kvspace call|tools|prompt` talk to: on the embedded store, the runtime in-process through
 * `createByteseek` (workspace `BYTESEEK_WORKSPACE`, default the working folder); against a server,
 * its `/v1/tools` and `/v1/prompt` routes. Both answer the same shapes, so the commands print the
 * same thing either way.
 */
import { resolve } from "node:path";
import pino from "pino";
import { Pool } from "undici";
import { createByteseek } from "../compose/byteseek.js";
import type { BuiltPrompt } from "../prompts/build.js";
import { catalogueToJson } from "../server/routes/tools.js";
import type { ToolsJson } from "../server/runtime-schemas.js";
import { type AgentToolAcceptance, acceptAgentTool } from "../tools/catalogue/agent-tools.js";
import {
  APPROVAL_DIR,
  type ApprovalDecision,
  type ApprovalEntry,
  approvalKey,
} from "../tools/gate/approvals.js";
import type { McpServerStatus } from "../tools/mcp/client.js";
import type { AcceptOptions, McpAcceptance, McpReview } from "../tools/mcp/review.js";
import type { SyncReport } from "../tools/mcp/sync.js";
import type { SearchHit } from "../tools/search/index.js";
import type { ToolResult } from "../tools/types.js";
import type { Tree } from "../tree/types.js";
import { CliError } from "./errors.js";
import { storeSpec } from "./open-store.js";

export interface ToolCallOptions {
  vid: string;
  approve?: boolean;
  signal?: AbortSignal;
}

export interface ToolsClient {
  call(name: string, args: unknown, options: ToolCallOptions): Promise<ToolResult>;
  /** The catalogue as `GET /v1/tools` answers it. */
  list(signal?: AbortSignal): Promise<ToolsJson>;
  /** The tools matching `query`, best first, as `GET /v1/tools?search=` answers them. */
  search(query: string, options: { limit: number; vid?: string }, signal?: AbortSignal): Promise<SearchHit[]>;
  /** What the model would get next for `vid`. */
  prompt(vid: string, signal?: AbortSignal): Promise<BuiltPrompt>;
  /** A person's decision on the approval `<vid>/<n>` (as `POST /v1/approvals/<vid>/<n>` answers it). */
  decide(
    id: string,
    decision: ApprovalDecision,
    signal?: AbortSignal,
  ): Promise<{ key: string; entry: ApprovalEntry }>;
  /** The approvals waiting for a person (`GET /v1/approvals`). */
  pending(signal?: AbortSignal): Promise<Array<{ key: string; entry: ApprovalEntry }>>;
  /** The registered upstream MCP servers (`GET /v1/mcp`). */
  mcpList(signal?: AbortSignal): Promise<McpServerStatus[]>;
  /** Syncs one upstream MCP server (or all) now (`POST /v1/mcp/sync`). */
  mcpSync(server?: string, signal?: AbortSignal): Promise<SyncReport[]>;
  /** A server's tools held for review, each with its diff (`GET /v1/mcp/<server>/review`). */
  mcpReview(server: string, signal?: AbortSignal): Promise<McpReview>;
  /** A person accepts held tools (`POST /v1/mcp/<server>/accept`). */
  mcpAccept(server: string, options: Omit<AcceptOptions, "by">, signal?: AbortSignal): Promise<McpAcceptance>;
  /** A person accepts a run's tool for every run (`POST /v1/tools/<name>/accept`). */
  acceptTool(name: string, hash?: string, signal?: AbortSignal): Promise<AgentToolAcceptance>;
  close(): Promise<void>;
}

export interface OpenToolsOptions {
  tree: Tree;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Where debug logs go (KVSPACE_DEBUG); otherwise nothing is logged. */
  stderr: NodeJS.WritableStream;
}

/**
 * The client for the store `KVSPACE` names: a server's routes for an http(s) URL, else in-process
 * (on a folder another process holds too: only the tree is reached through it, cli/open-store.ts).
 */
export async function openToolsClient(options: OpenToolsOptions): Promise<ToolsClient> {
  const spec = storeSpec(options.env, options.cwd);
  if (spec.backend === "http") return remoteTools(new URL(spec.url), options.env);
  return embeddedTools(options);
}

async function embeddedTools({ tree, env, cwd, stderr }: OpenToolsOptions): Promise<ToolsClient> {
  const debug = env.KVSPACE_DEBUG !== undefined && env.KVSPACE_DEBUG !== "";
  const logger = pino({ level: debug ? "debug" : "silent" }, stderr);
  const workspace = resolve(cwd, env.BYTESEEK_WORKSPACE || ".");
  const spec = storeSpec(env, cwd);
  const byteseek = await createByteseek({
    tree,
    workspace,
    logger,
    env,
    // kvspace seeded the store when it opened it (unless BYTESEEK_SEED=0 said not to)
    seed: false,
    sweep: false,
    ...(spec.backend === "classic" ? { storePath: spec.location } : {}),
  });
  return {
    call: (name, args, { vid, approve, signal }) =>
      byteseek.runtime.call(name, args, {
        vid,
        ...(approve === undefined ? {} : { approve }),
        ...(approve
          ? { approvedBy: "person (cli)", approvedVia: "command line (kvspace call --approve)" }
          : {}),
        ...(signal === undefined ? {} : { signal }),
      }),
    list: async () => catalogueToJson(await byteseek.runtime.listTools()),
    search: (query, { limit, vid }) => byteseek.search.search(query, { limit, vid: vid ?? "cli" }),
    prompt: (vid) => byteseek.prompt(vid),
    pending: () => byteseek.runtime.approvals.pending(),
    mcpList: () => byteseek.mcp.list(),
    mcpSync: (server) => byteseek.mcp.sync(server, "manual"),
    mcpReview: (server) => byteseek.mcp.review(server),
    mcpAccept: (server, accepting) => byteseek.mcp.accept(server, { ...accepting, by: "person (cli)" }),
    acceptTool: (name, hash) =>
      acceptAgentTool(byteseek.tree, name, { by: "person (cli)", ...(hash ? { hash } : {}) }),
    async decide(id, decision) {
      const key = approvalKey(id);
      return {
        key,
        entry: await byteseek.runtime.approvals.decide(
          key,
          decision,
          "person (cli)",
          "command line (kvspace approve/deny)",
        ),
      };
    },
    async close() {
      // The usage counters are written just after each call: store them before the tree closes.
      await byteseek.runtime.flush();
      await byteseek.close();
    },
  };
}

interface ErrorBody {
  error?: { code?: string; message?: string };
}

function remoteTools(url: URL, env: NodeJS.ProcessEnv): ToolsClient {
  const pool = new Pool(url.origin, { connections: 2 });
  const base = url.pathname.replace(/\/+$/, "");
  const auth: Record<string, string> = env.BYTESEEK_TOKEN
    ? { authorization: `Bearer ${env.BYTESEEK_TOKEN}` }
    : {};

  async function send<T>(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    let res: Awaited<ReturnType<Pool["request"]>>;
    try {
      res = await pool.request({
        method,
        path: `${base}${path}`,
        headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      throw new CliError(
        "CLI_STORE_UNAVAILABLE",
        `cannot reach the byteseek server at ${url.origin}: ${describe(err)}`,
        {
          cause: err,
        },
      );
    }
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) return JSON.parse(text) as T;
    let error: ErrorBody["error"];
    try {
      error = (JSON.parse(text) as ErrorBody).error;
    } catch {
      error = undefined;
    }
    if (res.statusCode === 404 && error?.code === "HTTP_NOT_FOUND")
      throw new CliError(
        "CLI_STORE_UNSUPPORTED",
        `the byteseek server at ${url.origin} does not offer ${method} ${path.replace(/\?.*$/, "")}`,
      );
    throw new CliError(
      "CLI_STORE_UNAVAILABLE",
      `the byteseek server answered ${res.statusCode}: ${error?.message ?? text.slice(0, 200)}`,
    );
  }

  return {
    call: (name, args, { vid, approve, signal }) =>
      send<ToolResult>(
        "POST",
        `/v1/tools/${encodeURIComponent(name)}/call`,
        { args, vid, ...(approve === undefined ? {} : { approve }) },
        signal,
      ),
    list: (signal) => send<ToolsJson>("GET", "/v1/tools", undefined, signal),
    pending: async (signal) =>
      (
        await send<{ pending: Array<{ key: string; entry: ApprovalEntry }> }>(
          "GET",
          "/v1/approvals",
          undefined,
          signal,
        )
      ).pending,
    async search(query, { limit, vid }, signal) {
      const q = new URLSearchParams({ search: query, limit: String(limit), ...(vid ? { vid } : {}) });
      const answer = await send<ToolsJson>("GET", `/v1/tools?${q}`, undefined, signal);
      return answer.search?.hits ?? [];
    },
    mcpList: async (signal) =>
      (await send<{ servers: McpServerStatus[] }>("GET", "/v1/mcp", undefined, signal)).servers,
    mcpSync: async (server, signal) =>
      (
        await send<{ reports: SyncReport[] }>(
          "POST",
          "/v1/mcp/sync",
          server === undefined ? {} : { server },
          signal,
        )
      ).reports,
    mcpReview: (server, signal) =>
      send<McpReview>("GET", `/v1/mcp/${encodeURIComponent(server)}/review`, undefined, signal),
    mcpAccept: (server, accepting, signal) =>
      send<McpAcceptance>("POST", `/v1/mcp/${encodeURIComponent(server)}/accept`, accepting, signal),
    acceptTool: (name, hash, signal) =>
      send<AgentToolAcceptance>(
        "POST",
        `/v1/tools/${encodeURIComponent(name)}/accept`,
        hash ? { hash } : {},
        signal,
      ),
    prompt: (vid, signal) =>
      send<BuiltPrompt>("GET", `/v1/prompt?vid=${encodeURIComponent(vid)}`, undefined, signal),
    decide(id, decision, signal) {
      const key = approvalKey(id);
      const [vid, n] = key.slice(APPROVAL_DIR.length).split("/") as [string, string];
      return send("POST", `/v1/approvals/${encodeURIComponent(vid)}/${n}`, decision, signal);
    },
    close: () => pool.close(),
  };
}

function describe(err: unknown): string {
  let e = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (e instanceof Error) return (e as NodeJS.ErrnoException).code ?? e.message;
  return String(e);
}
