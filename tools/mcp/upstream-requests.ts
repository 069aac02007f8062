/**
 * What byteseek answers when an upstream asks it something, on behalf of the run whose call it
 * serves: its roots (the run's workspace roots, when its grant reads or writes files), its person
 * (an elicitation becomes an approval entry, tools/gate/call-asks.ts, also put to the MCP host whose
 * call it is when that host can ask: tools/gate/host-asks.ts) and its model (sampling, only with
 * the run's `model` power).
 *
 * One connection serves every run, so each request is tied to a call first. A 2026-07-28 upstream
 * asks inside the call's own response (input_required): the call is known from the async context
 * the SDK fulfils it in. A 2025 upstream sends a request of its own: it belongs to the run whose
 * calls are in progress on that connection, and is refused when calls of several runs are (byteseek
 * never answers for one run with another's person, model or files).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { pathToFileURL } from "node:url";
import { type Client, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import type { ToolProgress } from "../call/call-notices.js";
import { printable } from "../catalogue/printable.js";
import type { ElicitationAsked } from "../gate/approvals.js";
import type { SampleReply, SampleRequest } from "../impl/llm.js";
import type { ToolContext } from "../types.js";

/** A call in progress on an upstream's connection, and what its upstream asked during it. */
export interface UpstreamCall {
  server: string;
  /** The upstream tool called. */
  tool: string;
  ctx: ToolContext;
  /** What the upstream asked during the call, recorded with the call's result. */
  asked: UpstreamAsked[];
  /** How many progress and log messages of the upstream were told so far (MAX_TOLD at most). */
  told?: number;
  /** How many of its sampling requests went to the run's model so far (MAX_SAMPLES at most). */
  samples?: number;
}

/** One request of the upstream during a call, as its record keeps it. */
export interface UpstreamAsked {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  /** `accept`, `decline`, `cancel`; `answered` (sampling, roots); `refused` or `failed` with why. */
  outcome: string;
  approval?: string;
  why?: string;
  /** A sample (answered or failed): the model that answered, its tokens, why it stopped, how long it took (ms). */
  model?: string;
  tokens?: { input: number; output: number };
  stop?: string;
  ms?: number;
}

/**
 * How long a call waits for a 2025 upstream to ask for the roots again after being told they
 * changed (it asked before, so it keeps them): the call then runs with the run's roots in place.
 */
export const ROOTS_REASK_MS = 1000;
/** At most this many requests of one call are recorded (an upstream asking in a loop cannot grow a record). */
const MAX_ASKED = 20;
/**
 * At most this many sampling requests of one call go to the run's model; more are refused. A run
 * has no token budget, so this bounds what an upstream can spend of the model per call (each
 * sample's tokens are also capped at the configured maxTokens, and counted in the run's usage).
 */
export const MAX_SAMPLES = 4;
/** At most this many progress and log messages of one call reach the turn: a chatty upstream cannot flood it. */
export const MAX_TOLD = 20;
/** A message told is cut to this many characters. */
const MAX_TOLD_CHARS = 300;

/**
 * Tells the call's listener one progress or log message of its upstream, neutralised and cut
 * short; after MAX_TOLD of them, one last marked `more` and then nothing.
 */
export function tell(call: UpstreamCall, progress: ToolProgress): void {
  const listener = call.ctx.onProgress;
  const told = call.told ?? 0;
  if (!listener || told > MAX_TOLD) return;
  call.told = told + 1;
  const text = printable(progress.message);
  const message = text.length > MAX_TOLD_CHARS ? `${text.slice(0, MAX_TOLD_CHARS - 1)}…` : text;
  try {
    if (told === MAX_TOLD)
      listener({ kind: "log", message: `(${call.server} says more; the rest is not shown)`, more: true });
    else listener({ ...progress, message });
  } catch {
    // a listener's failure never stops the call
  }
}

export interface UpstreamRequests {
  /** Declares what byteseek answers and sets the handlers, on a new client before it connects. */
  prepare(server: string, client: Client): void;
  /** Runs `fn` (the call's request) with `call` as the one its upstream's requests are answered for. */
  during<T>(client: Client, call: UpstreamCall, fn: () => Promise<T>): Promise<T>;
}

export function createUpstreamRequests(): UpstreamRequests {
  const current = new AsyncLocalStorage<UpstreamCall>();
  const inflight = new WeakMap<Client, Set<UpstreamCall>>();
  const roots = new WeakMap<Client, RootsTold>();
  const rootsOfClient = (client: Client): RootsTold => {
    let r = roots.get(client);
    if (!r) {
      r = {};
      roots.set(client, r);
    }
    return r;
  };

  /** The call a request of `server`'s upstream on `client` serves, or why none can be named. */
  function callOf(client: Client, server: string): UpstreamCall {
    const calls = inflight.get(client) ?? new Set<UpstreamCall>();
    const own = current.getStore();
    // the context is trusted only while its call is in progress on this very connection
    if (own && own.server === server && calls.has(own)) return own;
    const runs = new Set([...calls].map((c) => c.ctx.vid));
    if (runs.size === 0)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        "byteseek answers this only during a call of one of your tools (no call is in progress)",
      );
    if (runs.size > 1)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `calls of ${runs.size} byteseek runs are in progress on this connection, so byteseek cannot tell which run this request is for; ask during the call, inside its result (input_required), or when one run calls`,
      );
    return [...calls][0] as UpstreamCall;
  }

  /** The one call in progress on `client`, or none when there is none or they are of several runs. */
  function soleCall(client: Client): UpstreamCall | undefined {
    const calls = [...(inflight.get(client) ?? [])];
    return calls.length > 0 && new Set(calls.map((c) => c.ctx.vid)).size === 1 ? calls[0] : undefined;
  }

  function note(call: UpstreamCall, asked: UpstreamAsked): void {
    if (call.asked.length < MAX_ASKED) call.asked.push(asked);
  }

  function prepare(server: string, client: Client): void {
    client.registerCapabilities({ roots: { listChanged: true }, elicitation: { form: {} }, sampling: {} });

    // a log line belongs to the call it is sent during (2025: the one run calling on the connection)
    client.setNotificationHandler("notifications/message", (n) => {
      const call = current.getStore() ?? soleCall(client);
      if (!call || call.server !== server) return;
      const { level, data, logger } = n.params as { level?: string; data?: unknown; logger?: string };
      const text = typeof data === "string" ? data : (JSON.stringify(data) ?? "");
      tell(call, { kind: "log", message: logger ? `${logger}: ${text}` : text, ...(level ? { level } : {}) });
    });

    client.setRequestHandler("roots/list", async () => {
      const told = rootsOfClient(client);
      // an upstream that asks keeps what it is told: later calls of other runs tell it the roots changed
      told.asks = true;
      const call = callOf(client, server);
      note(call, { method: "roots/list", outcome: "answered" });
      const answer = rootsOf(call.ctx);
      told.key = rootsKey(call.ctx);
      told.answered?.();
      return { roots: answer };
    });

    client.setRequestHandler("elicitation/create", async (request) => {
      const call = callOf(client, server);
      const params = request.params as { mode?: string; message: string; requestedSchema?: unknown };
      if (params.mode === "url")
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, "byteseek answers form elicitations only");
      const person = call.ctx.asks?.person;
      if (!person) {
        note(call, {
          method: "elicitation/create",
          outcome: "cancel",
          why: "no person can be asked in this run",
        });
        return { action: "cancel" as const };
      }
      const question: ElicitationAsked = {
        server,
        message: String(params.message ?? ""),
        schema: (params.requestedSchema ?? { type: "object", properties: {} }) as Record<string, unknown>,
      };
      const answer = await person(question);
      note(call, { method: "elicitation/create", outcome: answer.action, approval: answer.approval });
      return answer.action === "accept"
        ? { action: "accept" as const, content: answer.content ?? {} }
        : { action: answer.action };
    });

    client.setRequestHandler("sampling/createMessage", async (request) => {
      const call = callOf(client, server);
      const model = call.ctx.asks?.model ?? { refused: "this call offers no model" };
      if (typeof model !== "function") {
        note(call, { method: "sampling/createMessage", outcome: "refused", why: model.refused });
        throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `${model.refused}`);
      }
      const asked = sampleRequest(request.params);
      if (typeof asked === "string") {
        note(call, { method: "sampling/createMessage", outcome: "refused", why: asked });
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, asked);
      }
      if ((call.samples ?? 0) >= MAX_SAMPLES) {
        const why = `byteseek answers at most ${MAX_SAMPLES} sampling requests during one call; ask again in another call`;
        note(call, { method: "sampling/createMessage", outcome: "refused", why });
        throw new ProtocolError(ProtocolErrorCode.InvalidRequest, why);
      }
      call.samples = (call.samples ?? 0) + 1;
      const started = performance.now();
      const took = () => Math.round(performance.now() - started);
      let reply: SampleReply;
      try {
        reply = await model(asked, call.ctx.signal);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        note(call, { method: "sampling/createMessage", outcome: "failed", why, ms: took() });
        throw err;
      }
      note(call, {
        method: "sampling/createMessage",
        outcome: "answered",
        model: reply.model,
        tokens: reply.tokens,
        stop: reply.stop,
        ms: took(),
      });
      return {
        role: "assistant" as const,
        content: { type: "text" as const, text: reply.text },
        model: reply.model,
        stopReason: reply.stop,
      };
    });
  }

  async function during<T>(client: Client, call: UpstreamCall, fn: () => Promise<T>): Promise<T> {
    let calls = inflight.get(client);
    if (!calls) {
      calls = new Set();
      inflight.set(client, calls);
    }
    calls.add(call);
    try {
      await tellRootsChanged(client, call, calls);
      return await current.run(call, fn);
    } finally {
      calls.delete(call);
    }
  }

  /**
   * A 2025 upstream that asked for roots holds those of the run it last answered (or none, asked
   * outside a call): when this call's run has others, it is told (notifications/roots/list_changed)
   * and the call waits, at most ROOTS_REASK_MS, for it to ask again — so it never works with another
   * run's folders. A 2026-07-28 upstream asks inside each call, and needs no telling.
   */
  async function tellRootsChanged(client: Client, call: UpstreamCall, calls: Set<UpstreamCall>) {
    const told = roots.get(client);
    const key = rootsKey(call.ctx);
    if (!told?.asks || told.key === key || told.notified === key) return;
    if (client.getProtocolEra() === "modern") return;
    // with calls of another run in progress, its roots/list would be refused anyway
    if (new Set([...calls].map((c) => c.ctx.vid)).size > 1) return;
    told.notified = key;
    const reasked = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ROOTS_REASK_MS);
      told.answered = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    try {
      await client.sendRootsListChanged();
      await reasked;
    } catch {
      // a connection that cannot take the notification fails the call itself, with its own error
    } finally {
      delete told.answered;
    }
  }

  return { prepare, during };
}

/** What a connection's upstream was told of the roots. */
interface RootsTold {
  /** It asked for roots (roots/list) at least once. */
  asks?: boolean;
  /** The roots (rootsKey) it was last answered. */
  key?: string;
  /** The roots it was last told changed to (told once, even when it does not ask again). */
  notified?: string;
  /** Ends the wait for its roots/list after a notification. */
  answered?: () => void;
}

function rootsKey(ctx: ToolContext): string {
  return JSON.stringify(ctx.asks?.roots ?? []);
}

/** The roots a run's call announces (CallAsks.roots: none without a files power). */
function rootsOf(ctx: ToolContext): Array<{ uri: string; name: string }> {
  return (ctx.asks?.roots ?? []).map((r, i) => ({
    uri: pathToFileURL(r).href,
    name: i === 0 ? "workspace" : `root ${i}`,
  }));
}

/** An upstream's sampling request as the model client takes it (text only), or why it cannot be. */
function sampleRequest(params: unknown): SampleRequest | string {
  const p = (params ?? {}) as { messages?: unknown; systemPrompt?: unknown; maxTokens?: unknown };
  if (!Array.isArray(p.messages) || p.messages.length === 0) return "a sampling request needs messages";
  const messages: SampleRequest["messages"] = [];
  for (const m of p.messages as Array<{ role?: unknown; content?: unknown }>) {
    const blocks = Array.isArray(m.content) ? m.content : [m.content];
    const texts: string[] = [];
    for (const b of blocks as Array<{ type?: unknown; text?: unknown }>) {
      if (b?.type !== "text" || typeof b.text !== "string")
        return `byteseek samples text only; this request has ${String(b?.type ?? "no")} content`;
      texts.push(b.text);
    }
    if (m.role !== "user" && m.role !== "assistant")
      return `a message's role is user or assistant, not ${String(m.role)}`;
    messages.push({ role: m.role, text: texts.join("\n") });
  }
  const maxTokens = typeof p.maxTokens === "number" && p.maxTokens > 0 ? Math.floor(p.maxTokens) : 1024;
  return {
    messages,
    maxTokens,
    ...(typeof p.systemPrompt === "string" && p.systemPrompt ? { system: p.systemPrompt } : {}),
  };
}
