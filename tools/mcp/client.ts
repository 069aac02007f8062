import type { Logger } from "pino";
import type { z } from "zod";
import type { Tree } from "../../tree/types.js";
import type { McpImpl } from "../catalogue/declaration.js";
import { isDocError, ToolError } from "../errors.js";
import { createPolicyReader, type Policy } from "../gate/policy.js";
import type { Need } from "../gate/powers.js";
import type { HostLookup } from "../net/host-rules.js";
import { createSandboxRunner, type SandboxRunner } from "../sandbox/runner.js";
import type { ToolContext, ToolOutput } from "../types.js";
import { type UpstreamVerdict, upstreamCallAllowed } from "./allowed.js";
import { type DevicePrompt, signInWithDevice } from "./oauth/device.js";
import { entryRevision } from "./oauth/entry.js";
import { signInFailure } from "./oauth/failure.js";
import { createTreeOAuthProvider } from "./oauth/provider.js";
import { type BegunSignIn, beginSignIn, finishSignIn, refreshIfDue, signOut } from "./oauth/sign-in.js";
import { authStatus, type McpAuthStatus } from "./oauth/status.js";
import { updateSession } from "./oauth/store.js";
import { heldReason } from "./pins.js";
import {
  isStdio,
  MCP_DIR,
  type McpServerEntry,
  parseEntry,
  ServerName,
  SYNC_DIR,
  serverOfKey,
  syncKey,
} from "./registry.js";
import { mapResult, type UpstreamResult } from "./result.js";
import {
  type AcceptOptions,
  acceptTools,
  type McpAcceptance,
  type McpReview,
  reviewServer,
} from "./review.js";
import { type SyncReport, syncServer } from "./sync.js";
import { readState, type SyncReason, type SyncState } from "./sync-state.js";
import { createUpstreamPool, DEFAULT_START_TIMEOUT_MS, type UpstreamState } from "./upstream.js";
import { pinnedConnector } from "./upstream-http.js";
import { createUpstreamRequests, tell, type UpstreamCall } from "./upstream-requests.js";
import { sandboxedLauncher } from "./upstream-sandbox.js";

type McpImplSpec = z.infer<typeof McpImpl>;

/** One registered server as `kvspace mcp list`, `GET /v1/mcp` and the web page show it. */
export interface McpServerStatus {
  server: string;
  /** `stdio` or `http`; absent when the entry is invalid. */
  transport?: "stdio" | "http";
  /** The program and arguments, or the URL. */
  target?: string;
  enabled: boolean;
  /** The upstream process or connection in this byteseek process; `disabled`, `invalid` for entries that cannot run. */
  state: UpstreamState | "disabled" | "invalid";
  pid?: number;
  /** The MCP revision spoken with it while connected here: 2026-07-28, or the 2025 one it answered. */
  protocol?: string;
  /** Synced tools in the tree. */
  tools: number;
  toolNames: string[];
  /** Tree names of its tools held for a person's review (changed upstream since accepted): not offered. */
  held: string[];
  /** The last sync's outcome, from the tree (shared by every process). */
  sync?: { state: "ok" | "error"; reason: SyncReason; ts: number; error?: string };
  /** Why it cannot run, or why it last stopped unasked. */
  error?: string;
  /** An HTTP server's sign-in (OAuth): whether it needs one, when its token expires. */
  auth?: McpAuthStatus;
}

export interface McpClientOptions {
  tree: Tree;
  logger: Logger;
  /** Real path of the workspace (a stdio server's cwd is relative to it). */
  workspace: string;
  /** The environment upstream processes take their allow-listed variables from. */
  env: Readonly<Record<string, string | undefined>>;
  /** The resolver an agent-registered HTTP server's host is checked with (default: the system's). */
  lookup?: HostLookup;
  /** The sandbox stdio servers start in (default: bubblewrap on PATH, closed with the client). */
  sandbox?: SandboxRunner;
  /** The server's own folders (the store): never shown to a stdio server. */
  hiddenPaths?: readonly string[];
}

/** byteseek's MCP client: the registry, its sync into declarations, and the `mcp` impl kind's calls. */
export interface McpClient {
  /** Syncs one server, or every registered one (and those whose entry went). Never throws. */
  sync(server?: string, reason?: SyncReason): Promise<SyncReport[]>;
  /** Syncs every server, then follows the registry (a write or delete re-syncs that server) until close. */
  start(): Promise<void>;
  list(): Promise<McpServerStatus[]>;
  /** Runs one `mcp` impl call on its upstream (the runtime's execute step). */
  call(impl: McpImplSpec, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>;
  /** The powers a call of the server's tools needs: exec for a command, net to the URL's host. */
  needs(server: string): Promise<Need[]>;
  /**
   * The server's upstream tools held for a person's review (pins.ts), by upstream name, each with why
   * (written for a model): the catalogue leaves them out, the gate refuses their calls.
   */
  held(server: string): Promise<ReadonlyMap<string, string>>;
  /** Whether a call may reach upstream tool `tool` of `server` (allowed.ts): allow-list, sync, pin. */
  allowed(server: string, tool: string): Promise<UpstreamVerdict>;
  /** The held tools of a server with the diff of each against what a person accepted. */
  review(server: string): Promise<McpReview>;
  /** A person accepts held tools (all when none are named) as they are upstream now. */
  accept(server: string, options: AcceptOptions): Promise<McpAcceptance>;
  /**
   * Starts a person's OAuth sign-in to an HTTP server that comes back to `redirectUri`; answers the
   * authorization URL to send them to (tools/mcp/oauth/sign-in.ts).
   */
  signIn(server: string, redirectUri: string): Promise<BegunSignIn>;
  /**
   * Starts a device-code sign-in (oauth/device.ts) that polls in the background, bounded, until a
   * person enters the code elsewhere; answers what to show them. A new sign-in or a sign-out of the
   * server, or close(), stops it; once signed in, the server is synced.
   */
  signInDevice(server: string): Promise<DevicePrompt>;
  /** Finishes the sign-in the redirect's state names (`<server>.<random>`), then syncs that server. */
  finishSignIn(redirected: string): Promise<{ server: string; report: SyncReport }>;
  /** Forgets a server's tokens; answers whether it had any. */
  signOut(server: string): Promise<boolean>;
  /** Stops following the registry, waits for syncs under way, stops every upstream. */
  close(): Promise<void>;
}

export function createMcpClient(options: McpClientOptions): McpClient {
  const { tree, logger } = options;
  const readPolicy = createPolicyReader(tree);
  async function policy(): Promise<Policy | undefined> {
    const loaded = await readPolicy();
    return loaded.ok ? loaded.policy : undefined;
  }
  let closing = false;
  const running = new Map<string, Promise<SyncReport>>();
  const again = new Map<string, SyncReason>();
  const sandbox = options.sandbox ?? createSandboxRunner();
  const upstreamRequests = createUpstreamRequests();
  const pool = createUpstreamPool({
    logger,
    workspace: options.workspace,
    env: options.env,
    passEnv: async () => (await policy())?.passEnv ?? [],
    connect: pinnedConnector({
      tree,
      readPolicy: policy,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    }),
    launch: sandboxedLauncher({
      tree,
      runner: sandbox,
      readPolicy: policy,
      workspace: options.workspace,
      hidden: options.hiddenPaths ?? [],
      home: options.env.HOME,
      logger,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    }),
    onListChanged: (server) => {
      logger.info({ server }, "MCP server says its tools changed");
      void syncOne(server, "list_changed");
    },
    // only an entry with `oauth` signs in: a bare 401 elsewhere keeps its own words (a header to set)
    authProvider: (server, entry) =>
      "oauth" in entry && entry.oauth !== undefined
        ? createTreeOAuthProvider({ tree, server, mode: "call" })
        : undefined,
    prepare: (server, client) => upstreamRequests.prepare(server, client),
  });
  const deps = {
    tree,
    logger,
    pool,
    readPolicy: policy,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  };
  const watchAbort = new AbortController();
  let watching: Promise<void> | undefined;

  /** One sync per server at a time; a request during one runs once more after it. */
  function syncOne(server: string, reason: SyncReason): Promise<SyncReport> {
    if (closing) return Promise.resolve(notRun(server, "byteseek is stopping: nothing is synced"));
    const busy = running.get(server);
    if (busy) {
      again.set(server, reason);
      return busy.then(() => running.get(server) ?? busy);
    }
    const run = (async () => {
      try {
        return await syncServer(deps, server, reason);
      } catch (err) {
        logger.error({ err, server }, "MCP sync failed inside byteseek");
        return notRun(server, `the sync of "${server}" failed inside byteseek: ${(err as Error).message}`);
      }
    })().finally(() => {
      running.delete(server);
      const next = again.get(server);
      again.delete(server);
      if (next && !closing) void syncOne(server, next);
    });
    running.set(server, run);
    return run;
  }

  async function registered(): Promise<string[]> {
    const names = new Set<string>();
    for (const dir of [MCP_DIR, SYNC_DIR]) {
      let after: string | undefined;
      do {
        let page: Awaited<ReturnType<Tree["list"]>>;
        try {
          page = await tree.list(dir, { limit: 500, values: false, ...(after ? { after } : {}) });
        } catch (err) {
          if ((err as { code?: string }).code === "TREE_NOT_FOUND") break;
          throw err;
        }
        for (const c of page.children)
          if (!c.name.endsWith("/") && ServerName.safeParse(c.name).success) names.add(c.name);
        after = page.next;
      } while (after);
    }
    return [...names].sort();
  }

  async function sync(server?: string, reason: SyncReason = "manual"): Promise<SyncReport[]> {
    if (server !== undefined) {
      if (!ServerName.safeParse(server).success)
        return [notRun(server, `"${server}" is not a server name (lowercase letters, digits, _ and -)`)];
      return [await syncOne(server, reason)];
    }
    return Promise.all((await registered()).map((s) => syncOne(s, reason)));
  }

  async function follow(fromRev: number): Promise<void> {
    try {
      for await (const batch of tree.watch(MCP_DIR, { fromRev, signal: watchAbort.signal })) {
        for (const event of batch.events) {
          const server = serverOfKey(event.key);
          if (server && ServerName.safeParse(server).success) void syncOne(server, "registry");
          else if (event.type === "deltree") void sync(undefined, "registry");
        }
      }
    } catch (err) {
      if (!watchAbort.signal.aborted) logger.error({ err }, "the MCP registry watch stopped");
    }
  }

  async function list(): Promise<McpServerStatus[]> {
    const out: McpServerStatus[] = [];
    for (const server of await registered()) {
      const [node, stateNode] = await Promise.all([
        tree.get(`${MCP_DIR}${server}`),
        tree.get(syncKey(server)),
      ]);
      let synced: SyncState | undefined;
      let damaged: string | undefined;
      try {
        synced = readState(syncKey(server), stateNode);
      } catch (err) {
        if (!isDocError(err)) throw err;
        damaged = err.message;
      }
      const toolNames = Object.keys(synced?.tools ?? {}).sort();
      const live = pool.status(server);
      const base = {
        server,
        tools: toolNames.length,
        toolNames,
        held: Object.values(synced?.held ?? {})
          .map((h) => h.name)
          .sort(),
        ...(synced
          ? {
              sync: {
                state: synced.state,
                reason: synced.reason,
                ts: synced.ts,
                ...(synced.error ? { error: synced.error } : {}),
              },
            }
          : {}),
      };
      if (!node || node.kind === "index") continue;
      const parsed = node.kind === "json" ? parseEntry(node.value.value) : undefined;
      if (!parsed?.ok) {
        out.push({
          ...base,
          enabled: false,
          state: "invalid",
          error: parsed ? parsed.problems.join("; ") : `not a json object (${node.kind})`,
        });
        continue;
      }
      const entry = parsed.entry;
      out.push({
        ...base,
        transport: isStdio(entry) ? "stdio" : "http",
        target: isStdio(entry) ? entry.command.join(" ") : entry.url,
        enabled: entry.enabled,
        // another process's failure is known from the tree: the last sync's
        state: !entry.enabled
          ? "disabled"
          : live.state === "stopped" && synced?.state === "error"
            ? "failed"
            : live.state,
        ...(live.pid !== undefined ? { pid: live.pid } : {}),
        ...(live.protocol !== undefined ? { protocol: live.protocol } : {}),
        ...((live.error ?? synced?.error ?? damaged)
          ? { error: live.error ?? synced?.error ?? damaged }
          : {}),
        ...(isStdio(entry) ? {} : { auth: authStatus(entry, synced?.error ?? live.error) }),
      });
    }
    return out;
  }

  // entries parsed once per revision: every call reads its server's entry twice (gate, execute)
  const parsedEntries = new Map<
    string,
    { modRev: number; parsed: ReturnType<typeof parseEntry> | undefined }
  >();
  async function readEntry(server: string) {
    const node = await tree.get(`${MCP_DIR}${server}`);
    if (!node || node.kind === "index") return undefined;
    const hit = parsedEntries.get(server);
    if (hit?.modRev === node.modRev) return { node, parsed: hit.parsed };
    const parsed = node.kind === "json" ? parseEntry(node.value.value) : undefined;
    if (parsedEntries.size > 1000) parsedEntries.clear();
    parsedEntries.set(server, { modRev: node.modRev, parsed });
    return { node, parsed };
  }

  async function entryOf(server: string): Promise<{ entry: McpServerEntry; rev: number }> {
    const read = await readEntry(server);
    if (!read)
      throw new ToolError(
        "mcp_unavailable",
        `no MCP server "${server}" is registered (${MCP_DIR}${server} is absent); see kvspace mcp list`,
      );
    const { node, parsed } = read;
    if (!parsed?.ok)
      throw new ToolError(
        "mcp_unavailable",
        `the MCP server "${server}" has an invalid entry at ${MCP_DIR}${server}${parsed ? `: ${parsed.problems.join("; ")}` : ""}; a person must fix it`,
      );
    if (!parsed.entry.enabled)
      throw new ToolError(
        "mcp_unavailable",
        `the MCP server "${server}" is switched off (enabled: false in ${MCP_DIR}${server})`,
      );
    return { entry: parsed.entry, rev: entryRevision(node) };
  }

  // held tools by server, read once per revision of its sync state (every listing and call asks)
  const heldCache = new Map<string, { modRev: number; held: ReadonlyMap<string, string> }>();
  async function held(server: string): Promise<ReadonlyMap<string, string>> {
    const node = await tree.get(syncKey(server));
    if (!node || node.kind === "index") return new Map();
    const hit = heldCache.get(server);
    if (hit?.modRev === node.modRev) return hit.held;
    const state = readState(syncKey(server), node);
    const out = new Map<string, string>();
    for (const [tool, h] of Object.entries(state?.held ?? {})) out.set(tool, heldReason(server, h));
    if (heldCache.size > 1000) heldCache.clear();
    heldCache.set(server, { modRev: node.modRev, held: out });
    return out;
  }

  async function call(
    impl: McpImplSpec,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<ToolOutput> {
    const { entry, rev } = await entryOf(impl.server);
    // the gate asked the same; asked again here, last, for any way to the upstream that skips it
    const allowed = await upstreamCallAllowed(tree, impl.server, impl.tool);
    if (!allowed.ok)
      throw new ToolError(allowed.code, `It was not run: ${allowed.reason}`, {
        details: { server: impl.server, tool: impl.tool },
      });
    if (!isStdio(entry)) await refreshDue(impl.server);
    const client = await pool.client(
      impl.server,
      entry,
      rev,
      entry.timeoutMs ?? DEFAULT_START_TIMEOUT_MS,
      ctx.signal,
    );
    const release = pool.use(impl.server);
    let result: UpstreamResult;
    const during: UpstreamCall = { server: impl.server, tool: impl.tool, ctx, asked: [] };
    try {
      // the runtime owns the timeout (its abort reaches the upstream as notifications/cancelled)
      result = (await upstreamRequests.during(client, during, () =>
        client.callTool(
          { name: impl.tool, arguments: args },
          {
            signal: ctx.signal,
            timeout: ctx.maxTimeoutMs,
            ...(ctx.onProgress
              ? {
                  onprogress: (p: { progress: number; total?: number; message?: string }) =>
                    tell(during, {
                      kind: "progress",
                      message: p.message ?? "",
                      progress: p.progress,
                      ...(p.total === undefined ? {} : { total: p.total }),
                    }),
                }
              : {}),
          },
        ),
      )) as UpstreamResult;
    } catch (err) {
      if (ctx.signal.aborted) {
        const reason = ctx.signal.reason;
        if (reason instanceof ToolError)
          throw new ToolError(
            reason.code,
            `${reason.message}; the MCP server "${impl.server}" was told to cancel it`,
            {
              details: { server: impl.server, tool: impl.tool },
            },
          );
        throw new ToolError("aborted", "the call was aborted");
      }
      const signIn =
        "oauth" in entry && entry.oauth !== undefined ? signInFailure(impl.server, err) : undefined;
      const state = pool.status(impl.server).state;
      // a server that died in the call: why, once known (killed at its memory cap)
      const cause = signIn || state === "running" ? undefined : await pool.crashCause(impl.server);
      throw withAsked(signIn ?? upstreamFailure(impl, err, state, cause), during);
    } finally {
      release();
    }
    let output: ToolOutput;
    try {
      output = mapResult(impl.server, impl.tool, result);
    } catch (err) {
      throw withAsked(err, during);
    }
    return during.asked.length ? { ...output, details: { ...output.details, asked: during.asked } } : output;
  }

  // the device sign-ins polling now, one per server: a new sign-in, a sign-out or close() stops it
  const devicePolls = new Map<string, AbortController>();
  function stopDevice(server: string): void {
    devicePolls.get(server)?.abort();
    devicePolls.delete(server);
  }

  // one refresh per server at a time: concurrent calls wait for the same one
  const refreshing = new Map<string, Promise<unknown>>();
  async function refreshDue(server: string): Promise<void> {
    let busy = refreshing.get(server);
    if (!busy) {
      busy = refreshIfDue(tree, server).finally(() => refreshing.delete(server));
      refreshing.set(server, busy);
    }
    try {
      await busy;
    } catch (err) {
      if (err instanceof ToolError) throw err;
      // the connection's own 401 handling tries again, and says so if a sign-in is needed
      logger.warn({ err, server }, "MCP token refresh failed");
    }
  }

  async function needs(server: string): Promise<Need[]> {
    const parsed = (await readEntry(server))?.parsed;
    if (!parsed?.ok) return [];
    return isStdio(parsed.entry) ? [{ power: "exec" }] : [{ power: "net", url: new URL(parsed.entry.url) }];
  }

  return {
    sync,
    list,
    call,
    needs,
    held,
    allowed: (server, tool) => upstreamCallAllowed(tree, server, tool),
    review: (server) => reviewServer(tree, server),
    async accept(server, accepting) {
      const done = await acceptTools(tree, server, accepting);
      if (done.accepted.length)
        logger.info({ server, accepted: done.accepted, by: accepting.by }, "MCP tools accepted");
      return done;
    },
    async signIn(server, redirectUri) {
      if (!ServerName.safeParse(server).success)
        throw new ToolError("mcp_unavailable", `"${server}" is not a server name`);
      stopDevice(server);
      return beginSignIn(tree, server, redirectUri);
    },
    async signInDevice(server) {
      if (!ServerName.safeParse(server).success)
        throw new ToolError("mcp_unavailable", `"${server}" is not a server name`);
      if (closing) throw new ToolError("mcp_unavailable", "byteseek is stopping");
      stopDevice(server);
      const stop = new AbortController();
      devicePolls.set(server, stop);
      return new Promise<DevicePrompt>((resolve, reject) => {
        let shown = false;
        signInWithDevice(tree, server, {
          signal: stop.signal,
          show(prompt) {
            shown = true;
            resolve(prompt);
          },
        })
          .then(async () => {
            logger.info({ server }, "MCP server signed in (device code)");
            if (!closing) await sync(server, "manual");
          })
          .catch(async (err: unknown) => {
            if (!shown) return reject(err);
            if (stop.signal.aborted) return;
            // the page learns it from the status (needs a sign-in, and why), unless tokens are kept
            const why = err instanceof Error ? err.message : String(err);
            logger.warn({ server, why }, "MCP device sign-in ended without tokens");
            await updateSession(tree, server, (s) =>
              s.tokens ? undefined : { ...s, error: why.slice(0, 300) },
            ).catch(() => {});
          })
          .finally(() => {
            if (devicePolls.get(server) === stop) devicePolls.delete(server);
          });
      });
    },
    async finishSignIn(redirected) {
      const state = new URL(redirected).searchParams.get("state") ?? "";
      const server = state.slice(0, Math.max(0, state.indexOf(".")));
      if (!ServerName.safeParse(server).success)
        throw new ToolError(
          "mcp_sign_in",
          "the redirect names no sign-in (its state is missing or malformed)",
        );
      await finishSignIn(tree, server, redirected);
      logger.info({ server }, "MCP server signed in");
      const [report] = await sync(server, "manual");
      return { server, report: report ?? notRun(server, "not synced") };
    },
    async signOut(server) {
      if (!ServerName.safeParse(server).success) return false;
      stopDevice(server);
      const had = await signOut(tree, server);
      await pool.stop(server);
      return had;
    },
    async start() {
      const from = tree.syncRevision ? await tree.syncRevision() : tree.revision();
      watching ??= follow(from + 1);
      await sync(undefined, "start");
    },
    async close() {
      closing = true;
      for (const server of [...devicePolls.keys()]) stopDevice(server);
      watchAbort.abort();
      await watching;
      await Promise.all([...running.values()]);
      await pool.close();
      if (!options.sandbox) await sandbox.close();
    },
  };
}

function notRun(server: string, error: string): SyncReport {
  return { server, ok: false, tools: 0, added: [], changed: [], removed: [], conflicts: [], error };
}

/** What the upstream asked before its call failed stays on the record (a refused sample, the tokens spent). */
function withAsked(err: unknown, during: UpstreamCall): unknown {
  if (err instanceof ToolError && during.asked.length) err.details.asked = during.asked;
  return err;
}

/** A failure of the upstream during a call: a protocol error it answered, or the connection lost. */
function upstreamFailure(impl: McpImplSpec, err: unknown, state: UpstreamState, cause?: string): ToolError {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown }).code;
  if (state !== "running")
    return new ToolError(
      "mcp_unavailable",
      `the MCP server "${impl.server}" stopped during the call of ${impl.tool} (${cause ?? message}); it is restarted on the next call`,
      { details: { server: impl.server, tool: impl.tool } },
    );
  return new ToolError(
    "mcp_protocol",
    `the MCP server "${impl.server}" refused the call of ${impl.tool}: ${message}${typeof code === "number" ? ` (JSON-RPC error ${code})` : ""}`,
    {
      details: {
        server: impl.server,
        tool: impl.tool,
        ...(typeof code === "number" ? { rpcCode: code } : {}),
      },
    },
  );
}
