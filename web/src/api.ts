import { dirs, idOf } from "../../shared/keys.js";
import { treeUrl } from "./keys.js";
import type {
  AgentToolAcceptJson,
  ApprovalJson,
  ChildJson,
  HistoryJson,
  HistoryListJson,
  ListJson,
  McpAcceptJson,
  McpReviewJson,
  McpServersJson,
  McpSyncJson,
  ModelChoicesJson,
  NodeJson,
  OverviewJson,
  PendingApprovalsJson,
  PromptJson,
  ReplayJson,
  RunDetail,
  RunDiffJson,
  RunStatus,
  RunsListing,
  ToolCallsJson,
  ToolResultJson,
  ToolsJson,
  TurnJson,
  WriteJson,
} from "./wire.js";

/** The value kinds of the tree; `index` is a directory. */
export const VALUE_KINDS = ["char/utf8", "json", "int64", "float64", "bool"] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];
export type NodeKind = ValueKind | "index";

/** A value in its JSON form: int64 beyond 2^53 arrives as a decimal string. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

// The server's answers, typed from its wire schemas (./wire.ts); values read as JsonValue.
export type NodeMeta = Omit<NodeJson, "value" | "preview" | "size" | "count">;
export type ValueNode = NodeMeta & { kind: ValueKind; value: JsonValue };
export type Child = Omit<ChildJson, "value"> & { value?: JsonValue };
export type Listing = Omit<ListJson, "children"> & { children: Child[] };
export type HistoryEntry = Omit<HistoryJson, "value"> & { value: JsonValue };
export type WriteAnswer = WriteJson;

/** An error answer: `{"error": {"code", "message", ...}}`, with the status. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The whole error body (a 412 carries the current node). */
    readonly body: unknown,
  ) {
    super(message);
  }
}

export interface ApiOptions {
  /** The bearer token, when the server needs one. */
  token(): string | null;
  /** Called on a 401; resolves true once the user gave a token (the request is then retried), false if they declined. */
  askToken(message: string): Promise<boolean>;
  /** Every answer's `X-Byteseek-Revision`. */
  onRevision?(rev: number): void;
}

export type Api = ReturnType<typeof createApi>;

/** What `GET /v1/info` answers: the workspace, the sandbox's state, the models a turn may name. */
export interface InfoAnswer {
  workspace?: string;
  sandbox?: { state: "on" | "off" | "unavailable"; warning?: string };
  llm?: ModelChoicesJson;
}

/** A call (or a change) waiting at /byteseek/approval/<vid>/<n>, as GET /v1/approvals lists it. */
export type PendingApproval = ApprovalJson;

/** The HTTP API of byteseek (DESIGN.md "Interfaces"), as the page uses it. */
export function createApi(options: ApiOptions) {
  async function request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const token = options.token();
    if (token) headers.set("authorization", `Bearer ${token}`);
    if (init.body !== undefined && !headers.has("content-type"))
      headers.set("content-type", "application/json");
    // No HTTP cache: the page follows the watch stream and always wants the current node (a
    // directory's ETag is its version, which its child count does not move).
    const res = await fetch(path, { cache: "no-store", ...init, headers });
    const rev = Number(res.headers.get("x-byteseek-revision"));
    if (Number.isFinite(rev) && rev > 0) options.onRevision?.(rev);
    // Ask until the server takes the token or the user gives up (Escape): each retry is theirs.
    if (
      res.status === 401 &&
      (await options.askToken(token ? "The token was refused." : "This server needs a token."))
    )
      return request(path, init);
    return res;
  }

  async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await request(path, init);
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    if (!res.ok) throw toError(res.status, body);
    return body as T;
  }

  return {
    request,
    /** A request whose answer is JSON: the body parsed, an error status thrown as an ApiError. */
    json,
    get: (key: string) => json<ValueNode>(treeUrl(key)),
    /** A directory's own node: its child count, versions and times. */
    dirNode: (dir: string) => json<NodeMeta & { count?: number }>(`${treeUrl(dir)}?node=1`),
    list: (
      dir: string,
      page: { after?: string; limit?: number; values?: boolean; system?: boolean } = {},
    ) => {
      const q = new URLSearchParams();
      if (page.limit) q.set("limit", String(page.limit));
      if (page.values === false) q.set("values", "0");
      if (page.system) q.set("system", "1");
      if (page.after !== undefined) q.set("after", page.after);
      const qs = q.toString();
      return json<Listing>(treeUrl(dir) + (qs ? `?${qs}` : ""));
    },
    history: async (key: string): Promise<HistoryEntry[]> =>
      (await json<HistoryListJson>(`${treeUrl(key)}?history=1`)).history as HistoryEntry[],
    /** Writes a value; `ifMatch` is the version the edit started from, `create` refuses to overwrite. */
    put: (
      key: string,
      value: { kind: ValueKind; value: JsonValue },
      opts: { ifMatch?: number; create?: boolean } = {},
    ) => {
      const headers: Record<string, string> = {};
      if (opts.ifMatch !== undefined) headers["if-match"] = String(opts.ifMatch);
      if (opts.create) headers["if-none-match"] = "*";
      return json<WriteAnswer>(treeUrl(key), { method: "PUT", headers, body: JSON.stringify(value) });
    },
    /** Creates a directory (and missing parents): PUT on a key ending in `/`. */
    mkdir: (dir: string) => json<WriteAnswer>(treeUrl(dir), { method: "PUT" }),
    /** Appends the next `<n>` child; answers the new key. */
    append: async (dir: string, value: { kind: ValueKind; value: JsonValue }): Promise<string> =>
      (await json<WriteJson>(treeUrl(dir), { method: "POST", body: JSON.stringify(value) })).key,
    del: (key: string, opts: { ifMatch?: number } = {}) => {
      const headers: Record<string, string> = {};
      if (opts.ifMatch !== undefined) headers["if-match"] = String(opts.ifMatch);
      return json<WriteAnswer>(treeUrl(key), { method: "DELETE", headers });
    },
    /** Where the server's file tools work, whether commands are sandboxed, which models a turn may name. */
    info: () => json<InfoAnswer>("/v1/info"),
    /** Runs by status, the tools failing in the last hour, the store (the overview's cards). */
    overview: () => json<OverviewJson>("/v1/overview"),
    tools: () => json<ToolsJson>("/v1/tools"),
    /** One tool's catalogue entry (valid or invalid), without the whole catalogue. */
    tool: (name: string) => json<ToolsJson>(`/v1/tools?name=${encodeURIComponent(name)}`),
    /** A tool's most recent calls across every run, newest first. */
    toolCalls: (name: string, limit = 20) =>
      json<ToolCallsJson>(`/v1/tools/${encodeURIComponent(name)}/calls?limit=${limit}`),
    /** The tools matching `query`, best first (`tools` in rank order, `search.hits` with scores). */
    searchTools: (query: string, limit = 50) =>
      json<ToolsJson>(`/v1/tools?search=${encodeURIComponent(query)}&limit=${limit}`),
    /** The registered upstream MCP servers; 404 when this server has no MCP client. */
    mcp: () => json<McpServersJson>("/v1/mcp"),
    mcpSync: (server: string) =>
      json<McpSyncJson>("/v1/mcp/sync", { method: "POST", body: JSON.stringify({ server }) }),
    /** Starts a person's OAuth sign-in to an HTTP upstream: the authorization URL to open. */
    mcpLogin: (server: string) =>
      json<{ authorizationUrl: string }>(`/v1/mcp/${encodeURIComponent(server)}/login`, {
        method: "POST",
        body: "{}",
      }),
    /** Starts a device-code sign-in: the code to enter, and where; the server polls until then. */
    mcpLoginDevice: (server: string) =>
      json<{
        verificationUri: string;
        userCode: string;
        verificationUriComplete?: string;
        expiresAt: number;
      }>(`/v1/mcp/${encodeURIComponent(server)}/login`, {
        method: "POST",
        body: JSON.stringify({ device: true }),
      }),
    /** A server's tools held for review, each with its diff against what was accepted. */
    mcpReview: (server: string) => json<McpReviewJson>(`/v1/mcp/${encodeURIComponent(server)}/review`),
    /** Accepts held tools as reviewed (`hashes`: the version shown, by tool; another is refused, 409). */
    mcpAccept: (server: string, tools: string[], hashes: Record<string, string>) =>
      json<McpAcceptJson>(`/v1/mcp/${encodeURIComponent(server)}/accept`, {
        method: "POST",
        body: JSON.stringify({ tools, hashes }),
      }),
    /** A person accepts a run's tool as reviewed (`hash`), so every run is offered it. */
    acceptTool: (name: string, hash: string) =>
      json<AgentToolAcceptJson>(`/v1/tools/${encodeURIComponent(name)}/accept`, {
        method: "POST",
        body: JSON.stringify({ hash }),
      }),
    approvals: () => json<PendingApprovalsJson>("/v1/approvals"),
    decide: (key: string, decision: "approve" | "deny", scope: "once" | "run" | "always" = "once") =>
      json<ApprovalJson>(`/v1/approvals/${idOf(dirs.approvals, key)}`, {
        method: "POST",
        body: JSON.stringify({ decision, ...(decision === "approve" ? { scope } : {}) }),
      }),
    /** A person's answer to an upstream MCP server's question: accept with the form's content, decline, or cancel. */
    answer: (
      key: string,
      answer: { action: "accept"; content: JsonValue } | { action: "decline" | "cancel" },
    ) =>
      json<ApprovalJson>(`/v1/approvals/${idOf(dirs.approvals, key)}`, {
        method: "POST",
        body: JSON.stringify(
          answer.action === "accept"
            ? { decision: "approve", content: answer.content }
            : { decision: "deny", ...(answer.action === "cancel" ? { cancel: true } : {}) },
        ),
      }),
    /** The system prompt and tool list the model gets next (for run `vid`: with its repair section). */
    prompt: (vid?: string) =>
      json<PromptJson>(vid ? `/v1/prompt?vid=${encodeURIComponent(vid)}` : "/v1/prompt"),
    /** A page of runs, filtered (GET /v1/agent/runs). */
    runs: (q: { status?: RunStatus; vid?: string; tool?: string; limit?: number; after?: string }) => {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") qs.set(k, String(v));
      return json<RunsListing>(`/v1/agent/runs?${qs}`);
    },
    /** One run's page facts (GET /v1/agent/runs/<vid>). */
    run: (vid: string) => json<RunDetail>(`/v1/agent/runs/${encodeURIComponent(vid)}`),
    /** Continues an interrupted run; answers the turn, with what became of each interrupted call. */
    resume: (vid: string) =>
      json<TurnJson>(`/v1/agent/runs/${encodeURIComponent(vid)}/resume`, { method: "POST", body: "{}" }),
    /** Replays a finished run, kept as a new run (its `vid`). */
    replay: (vid: string, liveTools = false) =>
      json<ReplayJson>(`/v1/agent/runs/${encodeURIComponent(vid)}/replay`, {
        method: "POST",
        body: JSON.stringify(liveTools ? { liveTools } : {}),
      }),
    /** Where runs `a` and `b` diverge first (GET /v1/agent/runs/<a>/diff/<b>). */
    diffRuns: (a: string, b: string) =>
      json<RunDiffJson>(`/v1/agent/runs/${encodeURIComponent(a)}/diff/${encodeURIComponent(b)}`),
    call: (name: string, body: { args: unknown; vid?: string; approve?: boolean }) =>
      json<ToolResultJson>(`/v1/tools/${encodeURIComponent(name)}/call`, {
        method: "POST",
        body: JSON.stringify(body),
      }),
  };
}

export function toError(status: number, body: unknown): ApiError {
  const err = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
  const message = err?.message ?? (typeof body === "string" && body ? body : `HTTP ${status}`);
  return new ApiError(status, err?.code ?? `HTTP_${status}`, message, body);
}

/** The current node a 412 carries (`error.current`, server/errors.ts). */
export function conflictNode(err: ApiError): ValueNode | undefined {
  const current = (err.body as { error?: { current?: unknown } } | undefined)?.error?.current;
  return current && typeof current === "object" && "version" in current ? (current as ValueNode) : undefined;
}
