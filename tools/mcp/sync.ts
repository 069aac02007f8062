import type { Logger } from "pino";
import { dirs } from "../../shared/keys.js";
import type { Tree, TxnCompare, TxnOp } from "../../tree/types.js";
import { type Json, json } from "../../tree/value.js";
import { docValue } from "../doc/read-write.js";
import { isDocError, ToolError } from "../errors.js";
import { netHosts, type Policy } from "../gate/policy.js";
import { grantOf } from "../gate/powers.js";
import { type HostLookup, resolveTarget, targetOfUrl } from "../net/host-rules.js";
import { systemLookup } from "../net/lookup.js";
import { type DeclJson, mergeDeclaration, overriddenFields, sameJson } from "./merge.js";
import { entryRevision } from "./oauth/entry.js";
import { pinOf, prunePins } from "./pins.js";
import { isStdio, MCP_DIR, type McpServerEntry, parseEntry, syncKey } from "./registry.js";
import {
  type Gone,
  type Held,
  type Pin,
  readState,
  type SyncReason,
  type SyncState,
  SyncStateDoc,
} from "./sync-state.js";
import { DEFAULT_START_TIMEOUT_MS, type UpstreamPool } from "./upstream.js";
import { type UpstreamTool, upstreamDeclarations } from "./upstream-tools.js";

const TOOLS_DIR = dirs.tools;
/** A transaction holds at most 128 operations (tree/txn.ts): compares and writes together. */
const MAX_TXN_OPS = 128;
const RETRIES = 5;

export interface SyncReport {
  server: string;
  ok: boolean;
  /** Tools the server has in the tree after the sync. */
  tools: number;
  added: string[];
  changed: string[];
  removed: string[];
  conflicts: string[];
  /** Tree names of the tools held for a person's review after this sync (kvspace mcp review). */
  held?: string[];
  error?: string;
}

export interface SyncDeps {
  tree: Tree;
  logger: Logger;
  pool: UpstreamPool;
  readPolicy: () => Promise<Policy | undefined>;
  /** The resolver an agent's HTTP server's host is checked with (default: the system's). */
  lookup?: HostLookup;
}

/**
 * Syncs one server: its upstream tools become declarations `/byteseek/tools/<server>.<tool>`, in
 * one transaction with the upstream copy, guarded by the revisions it read (a concurrent change
 * makes it read again). A person's local changes survive (merge.ts); tools gone upstream, or the
 * whole server when its entry is removed or switched off, are removed. A server that cannot start
 * or answer leaves its tools as they were and says why.
 */
export async function syncServer(deps: SyncDeps, server: string, reason: SyncReason): Promise<SyncReport> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await syncOnce(deps, server, reason);
    if (outcome !== "conflict") return outcome;
    if (attempt >= RETRIES)
      return failed(
        server,
        0,
        `the tree kept changing under the sync of "${server}"; run kvspace mcp sync ${server} again`,
      );
  }
}

async function syncOnce(
  deps: SyncDeps,
  server: string,
  reason: SyncReason,
): Promise<SyncReport | "conflict"> {
  const { tree, pool } = deps;
  const registryKey = `${MCP_DIR}${server}`;
  const [node, stateNode] = await Promise.all([tree.get(registryKey), tree.get(syncKey(server))]);
  let previous: SyncState | undefined;
  try {
    previous = readState(syncKey(server), stateNode);
  } catch (err) {
    // nothing is written: a person repairs or deletes the state (the message says how)
    if (isDocError(err)) return failed(server, 0, err.message);
    throw err;
  }
  const guards: TxnCompare[] = [
    node
      ? { key: registryKey, target: "modRev", value: node.modRev }
      : { key: registryKey, target: "exists", value: false },
    stateNode
      ? { key: syncKey(server), target: "modRev", value: stateNode.modRev }
      : { key: syncKey(server), target: "exists", value: false },
  ];
  /** Records the sync's failure (the tools this server had stay as they were). */
  const fail = (error: string) => recordError(deps, server, reason, previous, guards, error);
  let entry: McpServerEntry | undefined;
  if (node && node.kind === "json") {
    const parsed = parseEntry(node.value.value);
    if (!parsed.ok) {
      await pool.stop(server);
      return fail(`the entry at ${registryKey} is invalid: ${parsed.problems.join("; ")}`);
    }
    entry = parsed.entry;
  } else if (node && node.kind !== "index") {
    return fail(`the entry at ${registryKey} must be a json object, not ${node.kind}`);
  }
  const vid = node && node.kind !== "index" ? node.vid : undefined;

  let upstream = new Map<string, DeclJson>();
  /** The upstream's own list, by name, when it answered one. */
  let offered: Map<string, UpstreamTool> | undefined;
  if (entry?.enabled) {
    const refusal = await agentMayRegister(deps, entry, vid);
    if (refusal) {
      await pool.stop(server);
      return fail(refusal);
    }
    const timeout = entry.timeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    let listed: UpstreamTool[];
    try {
      const client = await pool.client(server, entry, entryRevision(node), timeout);
      const release = pool.use(server);
      try {
        // a server without tools has none to list: the SDK would say so with a console.debug line,
        // on the stdout `kvspace mcp sync` answers on
        listed = client.getServerCapabilities()?.tools
          ? ((await client.listTools(undefined, { timeout, cacheMode: "refresh" })).tools as UpstreamTool[])
          : [];
      } finally {
        release();
        await followSignIn(tree, registryKey, node, guards);
      }
    } catch (err) {
      await followSignIn(tree, registryKey, node, guards);
      const message =
        err instanceof ToolError
          ? err.message
          : `the MCP server "${server}" did not answer tools/list: ${(err as Error).message}`;
      return fail(message);
    }
    upstream = upstreamDeclarations(server, entry, listed);
    offered = new Map(listed.map((t) => [t.name, t]));
  } else await pool.stop(server);
  const pinned = pinTools(previous, upstream, offered, node ? entryRevision(node) : undefined, vid);

  // what the tree holds now of every tool this server had or has
  const names = new Set([...Object.keys(previous?.tools ?? {}), ...upstream.keys()]);
  const current = new Map<string, { modRev: number; value: DeclJson | undefined; ours: boolean }>();
  await Promise.all(
    [...names].map(async (name) => {
      const n = await tree.get(`${TOOLS_DIR}${name}`);
      if (!n || n.kind === "index") return;
      const value = n.kind === "json" && isObject(n.value.value) ? (n.value.value as DeclJson) : undefined;
      const impl = value?.impl as { kind?: unknown; server?: unknown } | undefined;
      current.set(name, { modRev: n.modRev, value, ours: impl?.kind === "mcp" && impl.server === server });
    }),
  );

  const ops: TxnOp[] = [];
  const compares = [...guards];
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  const conflicts: string[] = [];
  const overridden: Record<string, string[]> = {};
  const kept: Record<string, DeclJson> = {};
  for (const [name, decl] of upstream) {
    const key = `${TOOLS_DIR}${name}`;
    const now = current.get(name);
    const base = previous?.tools[name];
    if (!now) {
      // a tool coming back gets what a person had changed in it before it went
      const gone = previous?.gone?.[upstreamName(decl)];
      const back = gone?.local ? mergeDeclaration(gone.base, gone.local, decl) : decl;
      compares.push({ key, target: "exists", value: false });
      ops.push(setOp(key, back, vid));
      added.push(name);
      kept[name] = decl;
      continue;
    }
    if (!now.ours || now.value === undefined) {
      conflicts.push(name);
      continue;
    }
    const merged = mergeDeclaration(base, now.value, decl);
    const fields = overriddenFields(base, now.value);
    if (fields.length) overridden[name] = fields;
    kept[name] = decl;
    if (sameJson(merged, now.value)) continue;
    compares.push({ key, target: "modRev", value: now.modRev });
    ops.push(setOp(key, merged, vid));
    changed.push(name);
  }
  const synced = new Set([...upstream.values()].map(upstreamName));
  for (const [name, base] of Object.entries(previous?.tools ?? {})) {
    if (upstream.has(name)) continue;
    const now = current.get(name);
    const tool = upstreamName(base);
    if (!synced.has(tool))
      pinned.gone[tool] = {
        name,
        base,
        ...(now?.ours && now.value ? { local: now.value } : {}),
        upstream: offered !== undefined && !offered.has(tool),
        ts: Date.now(),
      };
    if (!synced.has(tool)) delete pinned.held[tool];
    if (now?.ours) {
      compares.push({ key: `${TOOLS_DIR}${name}`, target: "modRev", value: now.modRev });
      ops.push({ op: "del", key: `${TOOLS_DIR}${name}` });
    }
    removed.push(name);
  }
  prunePins(pinned.pins, pinned.gone);
  const unregistered = !entry;
  const report: SyncReport = {
    server,
    ok: true,
    tools: Object.keys(kept).length,
    added: added.sort(),
    changed: changed.sort(),
    removed: removed.sort(),
    conflicts: conflicts.sort(),
    held: Object.values(pinned.held)
      .map((h) => h.name)
      .sort(),
  };
  const nothingNew =
    ops.length === 0 &&
    previous?.state === "ok" &&
    sameJson(previous.tools, kept) &&
    sameJson(previous.last?.conflicts ?? [], report.conflicts) &&
    previous.entryRev === (node ? entryRevision(node) : undefined) &&
    sameJson(previous.pins ?? {}, pinned.pins) &&
    sameJson(previous.held ?? {}, pinned.held) &&
    sameJson(previous.gone ?? {}, pinned.gone);
  if (nothingNew && !unregistered) return report;
  if (unregistered) {
    if (stateNode) ops.push({ op: "del", key: syncKey(server) });
    if (ops.length === 0) return report;
  } else {
    const state: SyncState = {
      server,
      state: "ok",
      reason,
      ts: Date.now(),
      tools: kept,
      ...(node && node.kind !== "index" ? { entryRev: entryRevision(node) } : {}),
      pins: pinned.pins,
      held: pinned.held,
      gone: pinned.gone,
      last: {
        added: report.added,
        changed: report.changed,
        removed: report.removed,
        overridden,
        conflicts: report.conflicts,
      },
    };
    ops.push({ op: "set", key: syncKey(server), value: docValue(SyncStateDoc, state) });
  }
  if (ops.length + compares.length > MAX_TXN_OPS)
    return fail(
      `the MCP server "${server}" has too many tool changes for one transaction (${ops.length}); list the tools you need in the entry's "tools"`,
    );
  const res = await tree.txn({ compare: compares, success: ops });
  if (!res.succeeded) return "conflict";
  deps.logger.info(
    {
      server,
      reason,
      added: added.length,
      changed: changed.length,
      removed: removed.length,
      held: report.held?.length ?? 0,
    },
    "MCP server synced",
  );
  return report;
}

/**
 * The connection may have saved its sign-in (a refreshed token) in the entry while it listed: a
 * write of the session alone is not a change of the entry, so the guard takes its new revision.
 */
async function followSignIn(
  tree: Tree,
  key: string,
  node: Awaited<ReturnType<Tree["get"]>>,
  guards: TxnCompare[],
): Promise<void> {
  if (!node) return;
  const now = await tree.get(key);
  if (now && now.modRev !== node.modRev && entryRevision(now) === entryRevision(node))
    guards[0] = { key, target: "modRev", value: now.modRev };
}

/** The upstream name a synced declaration calls (`impl.tool`). */
function upstreamName(decl: DeclJson): string {
  return String((decl.impl as { tool?: unknown } | undefined)?.tool ?? "");
}

/**
 * The pins, held tools and gone tools after this sync. A tool whose pin matches is offered; one
 * without a pin is accepted when this is the server's first sync, or the first after its entry was
 * written (a fresh registration by whoever wrote it: a person, or the run that owns the entry), and
 * held as `new` otherwise; one whose pin differs is held as `changed`, one that left the upstream's
 * list and came back as `re-added`. A held tool stays held until a person accepts it — except a
 * `changed` one whose upstream went back to exactly what was accepted.
 */
function pinTools(
  previous: SyncState | undefined,
  upstream: ReadonlyMap<string, DeclJson>,
  offered: ReadonlyMap<string, UpstreamTool> | undefined,
  entryRev: number | undefined,
  vid: string | undefined,
): { pins: Record<string, Pin>; held: Record<string, Held>; gone: Record<string, Gone> } {
  const pins = { ...(previous?.pins ?? {}) };
  const held = { ...(previous?.held ?? {}) };
  const gone = { ...(previous?.gone ?? {}) };
  const fresh = previous?.pins === undefined || previous.entryRev !== entryRev;
  const by = vid === undefined ? "person (registration)" : `run ${vid} (registration)`;
  const now = Date.now();
  for (const [name, decl] of upstream) {
    const toolName = upstreamName(decl);
    const raw = offered?.get(toolName);
    if (!raw) continue;
    const { hash, tool } = pinOf(raw);
    const pin = pins[toolName];
    const wasGone = gone[toolName];
    delete gone[toolName];
    const before = held[toolName];
    if (before) {
      if (before.why === "changed" && pin?.hash === hash) delete held[toolName];
      else if (before.hash !== hash) held[toolName] = { ...before, hash, tool, name };
      continue;
    }
    if (pin && pin.hash === hash && !wasGone?.upstream) continue;
    if (!pin && fresh && !wasGone?.upstream) {
      pins[toolName] = { hash, tool, by, ts: now };
      continue;
    }
    const why = wasGone?.upstream ? "re-added" : pin ? "changed" : "new";
    const was = wasGone?.upstream ? (wasGone.pin ?? pin) : undefined;
    held[toolName] = { hash, tool, name, why, since: now, ...(was ? { was } : {}) };
  }
  return { pins, held, gone };
}

/**
 * A server an agent registered (the entry has an owner run) starts only with the powers that run
 * holds: `exec` for a command, `net` to the URL's host for Streamable HTTP. A person's entry starts.
 */
async function agentMayRegister(
  deps: SyncDeps,
  entry: McpServerEntry,
  vid: string | undefined,
): Promise<string | undefined> {
  if (vid === undefined) return undefined;
  const policy = await deps.readPolicy();
  if (!policy)
    return "the policy at /byteseek/policy is invalid, so no server an agent registered is started";
  const { grant, rule } = grantOf(policy.grants, vid);
  if (isStdio(entry)) {
    if (!grant.exec)
      return `run ${vid} registered this server, and it does not hold the power "exec" (run commands; rule: ${rule}.exec), so it is not started. A person may register it instead`;
    return undefined;
  }
  const url = new URL(entry.url);
  // the host rules on the name and on what it resolves to now (a name that does not resolve fails
  // at the connection instead); the connection checks again and is pinned to its own answer
  // (upstream-http.ts), so a later DNS answer cannot move it
  const verdict = await resolveTarget(targetOfUrl(url), netHosts(policy, grant), {
    lookup: deps.lookup ?? systemLookup,
  });
  if (!verdict.ok && verdict.code === "denied")
    return `run ${vid} registered this server, and it does not hold the power "net" to ${url.host} (${verdict.reason}; rule: ${rule}.net), so it is not reached. A person may register it instead`;
  return undefined;
}

async function recordError(
  deps: SyncDeps,
  server: string,
  reason: SyncReason,
  previous: SyncState | undefined,
  guards: TxnCompare[],
  error: string,
): Promise<SyncReport | "conflict"> {
  const tools = previous?.tools ?? {};
  const count = Object.keys(tools).length;
  if (previous?.state === "error" && previous.error === error) return failed(server, count, error);
  const state: SyncState = {
    server,
    state: "error",
    reason,
    ts: Date.now(),
    error,
    tools,
    ...(previous?.entryRev !== undefined ? { entryRev: previous.entryRev } : {}),
    ...(previous?.pins ? { pins: previous.pins } : {}),
    ...(previous?.held ? { held: previous.held } : {}),
    ...(previous?.gone ? { gone: previous.gone } : {}),
    ...(previous?.last ? { last: previous.last } : {}),
  };
  const res = await deps.tree.txn({
    compare: guards,
    success: [{ op: "set", key: syncKey(server), value: docValue(SyncStateDoc, state) }],
  });
  if (!res.succeeded) return "conflict";
  deps.logger.warn({ server, reason, error }, "MCP server sync failed");
  return failed(server, count, error);
}

function failed(server: string, tools: number, error: string): SyncReport {
  return { server, ok: false, tools, added: [], changed: [], removed: [], conflicts: [], error };
}

/**
 * A synced declaration is stored as upstream describes it, `unchecked`: one that does not validate
 * (an input schema ajv cannot compile) is listed with its problems by the catalogue (`tools
 * --check`) rather than failing the whole sync.
 */
function setOp(key: string, decl: DeclJson, vid: string | undefined): TxnOp {
  return {
    op: "set",
    key,
    value: json(decl as Json),
    unchecked: true,
    ...(vid !== undefined ? { vid } : {}),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
