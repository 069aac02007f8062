/**
 * Where `byteseek run` and `chat` run their turns: in this process on the store at KVSPACE, or on
 * the byteseek server KVSPACE names (POST /v1/agent/turn, its events read as server-sent events).
 * Through a server, the person's own BYTESEEK_LLM_* go with each turn (the key only with
 * `--send-key`), and the session says which model settings apply.
 */
import type { AgentEvent, TurnResult } from "../agent/events.js";
import {
  type ClientLlmSettings,
  clientLlmSettings,
  LLM_SETTINGS,
  resolveLlmConfig,
} from "../agent/llm-config.js";
import { dirs, idOf, keys } from "../shared/keys.js";
import { readSse } from "../shared/sse.js";
import type { ApprovalDecision } from "../tools/gate/approvals.js";
import { describeStore } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import { openStore, storeSpec } from "./open-store.js";
import { sessionLogger } from "./session-log.js";
import { serverWorkspace } from "./workspace-of.js";

/** One turn, wherever it runs: events are shown as they come, the result answered at the end. */
export type RunTurn = (
  input: string,
  vid: string,
  signal: AbortSignal,
  onEvent: (e: AgentEvent) => void,
) => Promise<TurnResult>;

/** A resume of an interrupted run, wherever it runs. */
export type ResumeTurn = (
  vid: string,
  signal: AbortSignal,
  onEvent: (e: AgentEvent) => void,
) => Promise<TurnResult>;

export interface Session {
  runTurn: RunTurn;
  resume: ResumeTurn;
  /** A person's decision on an approval key (the inline question on a terminal). */
  decide(key: string, decision: ApprovalDecision): Promise<void>;
  /** Lines for stderr before the first turn: which model settings apply, where logs go. */
  notes: string[];
  /** One call through the boundary, recorded under `vid` (chat's `@path`: edit.read, gated as the model's calls). */
  call(name: string, args: unknown, vid: string): Promise<CallAnswer>;
  /** The tools `vid`'s model is offered (enabled, with a snippet, not blocked for the run). */
  tools(vid: string): Promise<Array<{ name: string; snippet: string }>>;
  /** Agent runs in the store (`/vthread/<vid>/status`), at most `limit`. */
  runs(limit: number): Promise<Array<{ vid: string; status: string }>>;
  /** Which model the next turn uses, in a line. */
  model(): Promise<string>;
  /** Uses model `name` for the next turns (this session's BYTESEEK_LLM_MODEL). */
  setModel(name: string): void;
  /** Where the turn's file tools work (through a server: its workspace, when it says). */
  workspace?: string;
  /** Where the logs of an embedded run go, when to a file. */
  logFile?: string;
  close(): Promise<void>;
}

/** A call's answer, as far as chat shows it. */
export interface CallAnswer {
  kind: string;
  isError: boolean;
  text: string;
  record?: string;
}

export interface SessionOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Send BYTESEEK_LLM_KEY to the server with each turn. */
  sendKey?: boolean;
}

// Loaded when a server (or a folder's holder) answers: an embedded turn that reaches no server needs neither.
const undici = () => import("undici");
const httpTree = () => import("../tree/http/index.js");

export async function openSession(options: SessionOptions): Promise<Session> {
  const { env, cwd } = options;
  const spec = storeSpec(env);
  if (spec.backend === "http") {
    const session = remoteSession(new URL(spec.url), options);
    const workspace = await serverWorkspace(spec.url, env);
    return workspace === undefined ? session : { ...session, workspace };
  }
  // Logs never go into the conversation: to a file in the store's folder, or stderr when there is none.
  const { logger, logFile } = sessionLogger(env, spec);
  // A folder another byteseek process holds is reached through its socket: the turn still runs
  // here, with this shell's model and workspace; only the tree is the holder's.
  let reached: Tree | undefined;
  const tree: Tree = await openStore({
    env,
    cwd,
    logger: logger.child({ part: "tree" }),
    remote: async (url, remoteEnv, options) =>
      (reached = await (await httpTree()).openHttpTree(url, remoteEnv, options)),
  });
  const held = tree === reached;
  try {
    // here, not at the top: a turn through a server loads neither the agent's parts nor the share's
    const [{ createByteseek }, { holdShare }] = await Promise.all([
      import("../compose/byteseek.js"),
      import("./hold-share.js"),
    ]);
    const bs = await createByteseek({
      tree,
      workspace: env.BYTESEEK_WORKSPACE || cwd,
      logger,
      env,
      // the holder seeded its store
      ...(held ? { seed: false } : {}),
      ...(spec.backend === "classic" ? { storePath: spec.location } : {}),
    });
    // Holding the folder: serve its socket, so the printed `kvspace approve …` (and a `byteseek mcp`) reaches this run.
    let share: { close(): Promise<void> } | undefined;
    try {
      if (spec.backend === "classic" && !held)
        share = await holdShare({ tree, byteseek: bs, folder: spec.location, env, logger, holder: "run" });
    } catch (e) {
      await bs.close();
      throw e;
    }
    return {
      runTurn: (input, vid, signal, onEvent) => bs.agent.runTurn({ input, vid, signal, onEvent }),
      resume: (vid, signal, onEvent) => bs.agent.resumeRun({ vid, signal, onEvent }),
      call: (name, args, vid) => bs.runtime.call(name, args, { vid }),
      async tools(vid) {
        return offeredOf(
          (await bs.runtime.listTools(vid)).valid.map((t) => ({ ...t.declaration, blocked: t.blocked })),
        );
      },
      runs: (limit) => runsIn(tree, limit),
      async model() {
        try {
          const c = await resolveLlmConfig({ env, tree });
          return `model: ${c.model} (${c.api} at ${c.url})`;
        } catch (e) {
          return `model: none usable: ${(e as Error).message}`;
        }
      },
      setModel(name) {
        // read again on the next turn (agent/byteseek.ts resolves the settings per turn)
        env.BYTESEEK_LLM_MODEL = name;
      },
      async decide(key, decision) {
        await bs.runtime.approvals.decide(key, decision, "person (terminal)", "terminal (byteseek run/chat)");
      },
      workspace: bs.runtime.workspace,
      notes: held
        ? [
            `store: ${describeStore(spec)} is held by another byteseek process; this run reaches its tree through it`,
          ]
        : [],
      ...(logFile ? { logFile } : {}),
      async close() {
        await share?.close();
        await bs.close();
        await tree.close();
      },
    };
  } catch (e) {
    await tree.close();
    throw e;
  }
}

/** What a person is told about the model settings a turn through a server uses. */
export function modelNote(
  settings: ClientLlmSettings,
  env: Record<string, string | undefined>,
  server: string,
): string {
  const sent = (Object.keys(settings) as Array<keyof ClientLlmSettings>).map((f) => LLM_SETTINGS[f].env);
  const keyHere = Boolean(env.BYTESEEK_LLM_KEY?.trim()) && settings.key === undefined;
  if (sent.length === 0)
    return (
      `model: the server's settings apply (its BYTESEEK_LLM_* or /byteseek/llm/* in its tree); ` +
      `export BYTESEEK_LLM_API, BYTESEEK_LLM_URL and BYTESEEK_LLM_MODEL here to choose, or ` +
      `KVSPACE=${server} kvspace set /byteseek/llm/model string:NAME to change the server's`
    );
  return (
    `model: ${sent.join(", ")} from this shell, sent with each turn` +
    (keyHere
      ? "; BYTESEEK_LLM_KEY stays here (--send-key sends it; without it the server's key goes only to its own URL)"
      : "")
  );
}

/** Turns run by a byteseek server: POST /v1/agent/turn, its events read as server-sent events. */
function remoteSession(base: URL, { env, sendKey = false }: SessionOptions): Session {
  const root = base.href.endsWith("/") ? base : new URL(`${base.href}/`);
  const url = new URL("v1/agent/turn", root);
  const auth: Record<string, string> = env.BYTESEEK_TOKEN
    ? { authorization: `Bearer ${env.BYTESEEK_TOKEN}` }
    : {};
  // read per turn: /model changes it
  const settings = () => clientLlmSettings(env, { withKey: sendKey });
  /** A JSON answer of the server's, or an Error saying what it answered. */
  async function ask<T>(path: string, init: { method?: "GET" | "POST"; body?: unknown } = {}): Promise<T> {
    const res = await (await undici()).request(new URL(path, root), {
      method: init.method ?? "GET",
      headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...auth },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new Error(`the server at ${base.origin} answered ${res.statusCode}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }
  /** A turn (or a resume) on the server, its events read as server-sent events. */
  async function streamTurn(
    url: URL,
    body: Record<string, unknown>,
    signal: AbortSignal,
    onEvent: (e: AgentEvent) => void,
  ): Promise<TurnResult> {
    const res = await (await undici()).request(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...auth },
      body: JSON.stringify(body),
      signal,
    });
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      let error: { code?: string; message?: string } = { message: text.slice(0, 500) };
      try {
        error = (JSON.parse(text) as { error: typeof error }).error;
      } catch {
        // not our error body: shown as it is
      }
      throw new Error(`the server at ${url.origin} answered ${res.statusCode}: ${error.message}`);
    }
    let result: TurnResult | undefined;
    let failure: { code?: string } = {};
    for await (const ev of readSse(res.body)) {
      if (ev.event === "error") {
        failure = JSON.parse(ev.data) as typeof failure; // turn_end says how the turn ended
        continue;
      }
      const e = JSON.parse(ev.data) as AgentEvent;
      if (e.type === "turn_end") result = e.result;
      onEvent(e);
    }
    if (!result) throw new Error(`the server at ${url.origin} ended the stream before the turn ended`);
    if (
      failure.code === "LLM_NOT_CONFIGURED" ||
      failure.code === "LLM_BAD_CONFIG" ||
      failure.code === "LLM_CLIENT_REFUSED"
    )
      result.text = `the turn ran on the server at ${url.origin}: ${result.text}`;
    return result;
  }
  let tree: Promise<Tree> | undefined;
  return {
    notes: [modelNote(settings(), env, base.origin)],
    call: (name, args, vid) =>
      ask<CallAnswer>(`v1/tools/${encodeURIComponent(name)}/call`, { method: "POST", body: { args, vid } }),
    async tools(vid) {
      const listed = await ask<{
        tools: Array<{ snippet?: string; enabled: boolean; blocked?: string; name: string }>;
      }>(`v1/tools?vid=${encodeURIComponent(vid)}`);
      return offeredOf(listed.tools);
    },
    async runs(limit) {
      tree ??= httpTree().then(({ openHttpTree }) => openHttpTree(base, env));
      return runsIn(await tree, limit);
    },
    async model() {
      return modelNote(settings(), env, base.origin);
    },
    setModel(name) {
      env.BYTESEEK_LLM_MODEL = name;
    },
    runTurn: (input, vid, signal, onEvent) =>
      streamTurn(url, { vid, input, llm: settings() }, signal, onEvent),
    resume: (vid, signal, onEvent) =>
      streamTurn(
        new URL(`runs/${encodeURIComponent(vid)}/resume`, url),
        { llm: settings() },
        signal,
        onEvent,
      ),
    async decide(key, decision) {
      const id = idOf(dirs.approvals, key);
      const res = await (await undici()).request(
        new URL(`v1/approvals/${id}`, url.href.replace(/v1\/agent\/turn$/, "")),
        {
          method: "POST",
          headers: { "content-type": "application/json", ...auth },
          body: JSON.stringify(decision),
        },
      );
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`the server at ${url.origin} answered ${res.statusCode}: ${text.slice(0, 200)}`);
    },
    async close() {
      if (tree) await (await tree).close();
    },
  };
}

/** The tools a model is offered, as `/tools` lists them. */
function offeredOf(
  tools: ReadonlyArray<{
    name: string;
    snippet?: string | undefined;
    enabled: boolean;
    blocked?: string | undefined;
  }>,
): Array<{ name: string; snippet: string }> {
  return tools
    .filter((t) => t.enabled && t.snippet && !t.blocked)
    .map((t) => ({ name: t.name, snippet: t.snippet as string }));
}

/** Agent runs and their state, from `/vthread/<vid>/status` (natural order; at most `limit`). */
async function runsIn(tree: Tree, limit: number): Promise<Array<{ vid: string; status: string }>> {
  let listed: Awaited<ReturnType<Tree["list"]>>;
  try {
    listed = await tree.list(dirs.runs, { limit });
  } catch {
    return [];
  }
  const out: Array<{ vid: string; status: string }> = [];
  for (const child of listed.children) {
    if (child.kind !== "index") continue;
    const vid = child.name.replace(/\/$/, "");
    const node = await tree.get(keys.runStatus(vid)).catch(() => undefined);
    // an MCP host session's run (mcp/session-run.ts) is listed with its client's name
    const client = node ? undefined : await tree.get(keys.runClient(vid)).catch(() => undefined);
    const name = client?.kind === "json" ? (client.value.value as { name?: unknown }).name : undefined;
    out.push({
      vid,
      status:
        node?.kind === "char/utf8"
          ? String(node.value.value)
          : client
            ? `MCP session of ${typeof name === "string" ? name : "a client"}`
            : "-",
    });
  }
  return out;
}
