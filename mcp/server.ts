/**
 * `createMcpFactory(deps)`: builds the MCP server instances both transports serve — one per
 * stdio connection, one per 2025-era HTTP session, one per 2026-era HTTP request. An instance
 * holds nothing but its run id and resource subscriptions: the tool list, prompts and resources
 * are read from the tree on every request, and every call goes through the source's boundary.
 *
 * A call needs the catalogue only to map its MCP name back to a tree name, so `tools/call` uses
 * the catalogue kept per run (the last one built for it), dropped whenever the watch sees the
 * tools or the policy change: reading every declaration per call would cost more than the call
 * (each call's record moves the tree's revision, so the runtime's own cache never holds). A name
 * the kept catalogue does not know is looked up afresh, so a tool written a moment ago is
 * callable before the watch tells; a name it maps is checked again by the boundary anyway.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type ClientCapabilities,
  createRequestStateCodec,
  type ElicitResult,
  type Implementation,
  type InputRequiredResult,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import { capText } from "../tools/call/cap.js";
import { createPolicyReader, defaultPolicy } from "../tools/gate/policy.js";
import type { ToolResult } from "../tools/types.js";
import { parseKey } from "../tree/path.js";
import {
  APPROVAL_KEY,
  type ApprovalFacts,
  approvalAnswer,
  approvalForm,
  decideApproval,
  notAsked,
} from "./approval.js";
import { buildCatalogue, findTools, type McpCatalogue } from "./catalogue.js";
import { encodeAnswer, type PlainToolCall } from "./fast-call.js";
import {
  canAskForm,
  formRequest,
  pushAsker,
  type SendElicitation,
  UPSTREAM_KEY,
  upstreamAnswer,
} from "./host-elicit.js";
import { createParking, type ParkedStep } from "./host-parking.js";
import type { ServerIdentity } from "./identity.js";
import type { LiveTree } from "./live.js";
import { CALL_TOOL, FIND_TOOL } from "./names.js";
import { getTemplate, listPrompts, MCP_PROMPTS_DIR, SYSTEM_PROMPT, systemPromptResult } from "./prompts.js";
import { cursorProblem, listMemory, readKey, TREE_TEMPLATE, unreadable, uriToKey } from "./resources.js";
import { clientVid, type SessionRun, sessionRun, type Transport } from "./session-run.js";
import type { McpSource, SourceCallOptions } from "./source.js";

export { clientVid } from "./session-run.js";

/** byteseek_find with a query answers at most this many tools, best first. */
const FIND_LIMIT = 20;

/** What hosts keep of a tool result, at most (characters). */
export const HOST_TEXT_LIMIT = 50_000;

export interface McpFactoryDeps {
  source: McpSource;
  logger: Logger;
  /** byteseek's version, as the server tells clients. */
  version?: string;
  /** Signs the state that ties an approval to the call it was asked for (default: random per process). */
  stateKey?: Uint8Array;
  /**
   * The tree's change events: with them, calls map names through a kept catalogue, dropped when the
   * tools or the policy change (in the same tick as the transports notify, so no request sees a
   * notification before the drop). Without them every call reads the catalogue afresh.
   */
  live?: LiveTree;
  /** Where the file tools work, told to hosts in the instructions (absent through a server's URL: unknown here). */
  workspace?: string;
}

/** Runs whose catalogue is kept at once; the oldest is dropped beyond it. */
const KEPT_CATALOGUES = 64;

export interface InstanceOptions {
  era: "legacy" | "modern";
  /** The run the calls belong to; absent: the session's (`mcp-<client>-<n>`), or without one `mcp-<client name>`. */
  vid?: string;
  /** The session this instance serves (mcp/session-run.ts): its calls are one run. */
  session?: SessionRun;
  /** Keep it among the instances change notifications go to (default true; not for one-request instances). */
  track?: boolean;
}

/** A live instance and what the change events need of it. */
export interface McpInstance {
  server: Server;
  era: "legacy" | "modern";
  /** Resource URIs a 2025-era client subscribed to (`resources/subscribe`). */
  subscriptions: Set<string>;
  /**
   * What a 2026-era stdio client listens for (mcp/stdio.ts): change notifications nothing listens
   * for are not made at all (the SDK would make each, then drop it).
   */
  listening?: ListenFilters;
}

/** A connection's open `subscriptions/listen` filters (by request id), as the client sent them. */
export class ListenFilters {
  readonly #open = new Map<string | number, ListenFilter>();

  add(id: string | number, filter: ListenFilter): void {
    this.#open.set(id, filter);
  }

  end(id: string | number): void {
    this.#open.delete(id);
  }

  /** Whether some open listen stream takes this kind of change. */
  wants(kind: "tools" | "prompts" | "resources"): boolean {
    const field = `${kind}ListChanged` as const;
    return this.#some((f) => f[field] === true);
  }

  /** Whether some open listen stream subscribed to any resource. */
  wantsAnyUri(): boolean {
    return this.#some((f) => (f.resourceSubscriptions?.length ?? 0) > 0);
  }

  /** Whether some open listen stream subscribed to this resource. */
  wantsUri(uri: string): boolean {
    return this.#some((f) => f.resourceSubscriptions?.includes(uri) === true);
  }

  #some(test: (f: ListenFilter) => boolean): boolean {
    for (const f of this.#open.values()) if (test(f)) return true;
    return false;
  }
}

/** The filter of a `subscriptions/listen` request (`params.notifications`), as far as it is read here. */
export interface ListenFilter {
  toolsListChanged?: unknown;
  promptsListChanged?: unknown;
  resourcesListChanged?: unknown;
  resourceSubscriptions?: unknown[];
}

/**
 * Lists answered in one page carry no nextCursor, so any cursor a client sends was not byteseek's:
 * invalid params (-32602), as the spec asks, rather than a silent first page again.
 */
function onePage(method: string, cursor: unknown): void {
  if (cursor !== undefined)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `${method} answers everything in one page, so the cursor ${JSON.stringify(cursor)?.slice(0, 80)} is not one byteseek gave; list again without a cursor`,
    );
}

/** A result as hosts take it: the model-facing text (kept under their limit), the kind and record in `_meta`. */
export function toCallResult(r: ToolResult): CallToolResult {
  const text = r.text.length > HOST_TEXT_LIMIT ? capText(r.text, HOST_TEXT_LIMIT - 1000).text : r.text;
  return {
    content: [{ type: "text", text }],
    isError: r.isError,
    _meta: { "byteseek/kind": r.kind, ...(r.record === undefined ? {} : { "byteseek/record": r.record }) },
  };
}

function deniedResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true, _meta: { "byteseek/kind": "denied" } };
}

/**
 * The signed state a question is asked with (2026 era), echoed back with the answer: the call it
 * is for (run, tool, arguments), and for an upstream's question the parked call it waits in.
 */
interface ApprovalState {
  call: string;
  park?: string;
}

/** What a `tools/call` needs of its request beyond name and arguments (from the SDK's context, or a hand-served request). */
export interface CallContext {
  clientInfo(): Implementation | undefined;
  clientCaps(): ClientCapabilities | undefined;
  signal: AbortSignal;
  /** The client's answers to an earlier input-required result (2026 era). */
  inputResponses?: Record<string, unknown> | undefined;
  requestState(): ApprovalState | undefined;
  /** Sends `elicitation/create` on this request (2025 era only: a 2026 host is asked in the result). */
  elicit?: SendElicitation;
}

/** What a call made on a host's behalf answers: its result, or a question for the host (2026 era). */
type Hosted = { result: ToolResult } | { ask: InputRequiredResult };

export type { ServerIdentity } from "./identity.js";

export function createMcpFactory(deps: McpFactoryDeps) {
  const { source, logger } = deps;
  const { tree } = source;
  const readPolicy = createPolicyReader(tree);
  const codec = createRequestStateCodec<ApprovalState>({
    key: deps.stateKey ?? randomBytes(32),
    ttlSeconds: 3600,
  });
  const instances = new Set<McpInstance>();
  // 2026-era calls whose upstream asks their host something (mcp/host-parking.ts)
  const parking = createParking();

  // The catalogue kept per run, and a generation bumped by every tools/policy change so a build
  // that started before a change is not kept after it.
  const kept = new Map<string, McpCatalogue>();
  let generation = 0;
  let following = false;

  /** The catalogue as the tree holds it now (and kept for `vid`'s calls). */
  async function freshCatalogue(vid: string): Promise<McpCatalogue> {
    // The watch starts with the first catalogue kept, not with the server: no MCP client, no watch.
    if (deps.live && !following) {
      following = true;
      deps.live.subscribe(function dropCatalogues(change) {
        if (!change.tools) return;
        generation++;
        kept.clear();
      });
    }
    const started = generation;
    const catalogue = buildCatalogue(await source.tools(vid));
    if (deps.live && started === generation) {
      kept.delete(vid);
      if (kept.size >= KEPT_CATALOGUES) kept.delete(kept.keys().next().value as string);
      kept.set(vid, catalogue);
    }
    return catalogue;
  }

  /** The tree name an MCP tool name stands for in `vid`'s catalogue (a tree name stands for itself). */
  async function treeName(vid: string, name: string): Promise<string> {
    // MCP names hold no dot (names.ts): a name with one is a tree name already.
    if (name.includes(".")) return name;
    const hit = kept.get(vid)?.names.toTree.get(name);
    if (hit !== undefined) return hit;
    return (await freshCatalogue(vid)).names.toTree.get(name) ?? name;
  }

  /** The fingerprint an approval is bound to: this run, this tool, these arguments. */
  const fingerprint = (vid: string, name: string, args: unknown): string =>
    createHash("sha256")
      .update(JSON.stringify([vid, name, args ?? {}]))
      .digest("base64url");

  /**
   * Calls `name` for the host. When the host can be asked (form elicitation), a question the
   * tool's upstream asks during the call is put to it as well as kept in the tree: a 2025 host
   * gets an `elicitation/create` of its own; for a 2026 host the call is parked (mcp/host-parking.ts)
   * and the question answered in an input_required result.
   */
  async function callHosted(
    name: string,
    args: unknown,
    ctx: CallContext,
    vid: string,
    extra: Pick<SourceCallOptions, "approve" | "approvedBy" | "approvedVia">,
  ): Promise<Hosted> {
    const { signal } = ctx;
    if (!canAskForm(ctx.clientCaps()))
      return { result: await source.call(name, args, { vid, signal, ...extra }) };
    const who = {
      by: `person (MCP host ${ctx.clientInfo()?.name ?? "client"})`,
      via: `MCP elicitation of session ${vid}`,
    };
    if (ctx.elicit) {
      const askHost = pushAsker(ctx.elicit, name, who);
      return { result: await source.call(name, args, { vid, signal, askHost, ...extra }) };
    }
    const call = fingerprint(vid, name, args);
    const step = await parking.start(
      vid,
      call,
      name,
      who,
      (askHost, callSignal) => source.call(name, args, { vid, signal: callSignal, askHost, ...extra }),
      signal,
    );
    return hostedStep(step, call);
  }

  async function hostedStep(step: ParkedStep, call: string): Promise<Hosted> {
    if ("result" in step) return step;
    return {
      ask: inputRequired({
        inputRequests: { [UPSTREAM_KEY]: inputRequired.elicit({ mode: "form", ...step.ask }) },
        requestState: await codec.mint({ call, park: step.park }),
      }),
    };
  }

  /** A 2026 host's answer to an upstream's question, handed to the call parked for it. */
  async function resumeHosted(
    state: ApprovalState & { park: string },
    ctx: CallContext,
    call: string,
  ): Promise<CallToolResult | InputRequiredResult> {
    // the state is signed, and names the run, tool and arguments: another session's is not this call's
    const step =
      state.call === call
        ? await parking.resume(state.park, call, upstreamAnswer(ctx.inputResponses), ctx.signal)
        : undefined;
    if (step === undefined)
      return deniedResult(
        "This answers a question byteseek is no longer asking in this session (it was answered elsewhere, timed out, or belongs to another call): the answer was not used. The call's record is under /byteseek/tool/<run>/; call the tool again if it is still needed.",
      );
    const hosted = await hostedStep(step, call);
    return "ask" in hosted ? hosted.ask : toCallResult(hosted.result);
  }

  async function callThrough(
    name: string,
    args: unknown,
    ctx: CallContext,
    vid: string,
  ): Promise<CallToolResult | InputRequiredResult> {
    const call = fingerprint(vid, name, args);
    const state = ctx.requestState();
    if (state?.park !== undefined) return resumeHosted({ ...state, park: state.park }, ctx, call);
    let answer = approvalAnswer(ctx.inputResponses as Parameters<typeof approvalAnswer>[0]);
    // An answer counts only for the call it was asked for (the state we signed says which).
    if (answer !== undefined && state?.call !== call) answer = undefined;
    let shown: { effect?: string; owner?: string; hash?: string } = {};
    if (answer === undefined) {
      const first = await callHosted(name, args, ctx, vid, {});
      if ("ask" in first) return first.ask;
      const result = first.result;
      if (result.details.code !== "needs_approval") return toCallResult(result);
      const d = result.details as { effect?: { text?: unknown }; owner?: unknown; hash?: unknown };
      shown = {
        ...(typeof d.effect?.text === "string" ? { effect: d.effect.text } : {}),
        ...(typeof d.owner === "string" ? { owner: d.owner } : {}),
        ...(typeof d.hash === "string" ? { hash: d.hash } : {}),
      };
    }
    const facts = { name, args, ...shown };
    let step = decideApproval({
      ...facts,
      answer,
      canAsk: ctx.clientCaps()?.elicitation !== undefined,
      requestState: await codec.mint({ call }),
    });
    // a 2025 host is asked here, on the call's own request, in its revision's words: the SDK's
    // fulfilment of an input_required result sends `mode`, which hosts before 2025-11-25 lack
    if (step.step === "ask" && ctx.elicit) step = await askOnRequest(ctx.elicit, facts, ctx.signal);
    if (step.step === "ask") return step.result;
    if (step.step === "deny") return deniedResult(step.text);
    const approvedBy = `person (MCP host ${ctx.clientInfo()?.name ?? "client"})`;
    // the session is the run the connection's calls belong to (one per relayed connection)
    const approvedVia = `MCP elicitation of session ${vid}`;
    const approved = await callHosted(name, args, ctx, vid, { approve: true, approvedBy, approvedVia });
    return "ask" in approved ? approved.ask : toCallResult(approved.result);
  }

  /** A 2025 host's person asked to approve a call, on the call's request; their answer decides it. */
  async function askOnRequest(elicit: SendElicitation, facts: ApprovalFacts, signal: AbortSignal) {
    const loaded = await readPolicy();
    const timeout = (loaded.ok ? loaded.policy : defaultPolicy()).approvalTimeoutMs;
    let reply: ElicitResult;
    try {
      reply = await elicit(approvalForm(facts), { signal, timeout });
    } catch (err) {
      if (signal.aborted) throw err;
      return notAsked(facts.name, facts.args, err instanceof Error ? err.message : String(err));
    }
    const answer = approvalAnswer({ [APPROVAL_KEY]: reply }) ?? "cancelled";
    return decideApproval({ ...facts, answer, canAsk: true });
  }

  /** `tools/call`: the facade tools, or any tool by its MCP (or tree) name, through the boundary. */
  async function callTool(
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext,
    fixedVid: string | undefined,
  ): Promise<CallToolResult | InputRequiredResult> {
    const vid = fixedVid ?? clientVid(ctx.clientInfo()?.name);
    if (name === FIND_TOOL) {
      const query = typeof args.query === "string" ? args.query : "";
      const catalogue = await freshCatalogue(vid);
      const ranked =
        query.trim() !== "" && source.search ? await source.search(query, vid, FIND_LIMIT) : undefined;
      return { content: [{ type: "text", text: capText(findTools(catalogue, query, ranked), 49_000).text }] };
    }
    if (name === CALL_TOOL) {
      const target = typeof args.name === "string" ? args.name : "";
      if (target === "" || target === FIND_TOOL || target === CALL_TOOL)
        return {
          content: [
            {
              type: "text",
              text: `${CALL_TOOL} needs "name": a byteseek tool's tree name (e.g. edit.read), and "args": its arguments. byteseek_find lists them.`,
            },
          ],
          isError: true,
          _meta: { "byteseek/kind": "arg" },
        };
      return callThrough(await treeName(vid, target), args.args ?? {}, ctx, vid);
    }
    // A name not offered still goes through the boundary, which says what exists (and records it).
    return callThrough(await treeName(vid, name), args, ctx, vid);
  }

  const identity: ServerIdentity = { name: "byteseek", version: deps.version ?? "0.1.0" };

  function create(options: InstanceOptions): McpInstance {
    const server = new Server(
      { ...identity },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
        },
        instructions: `byteseek's tools edit files exactly and are recorded in its tree.${deps.workspace === undefined ? "" : ` Files are read and written in the workspace ${deps.workspace}: paths are relative to it.`} The tool list follows the tree: if a tool you expect is missing, byteseek_find lists what exists now and byteseek_call calls it.`,
        requestState: { verify: codec.verify },
      },
    );
    const instance: McpInstance = { server, era: options.era, subscriptions: new Set() };
    // 2026 era: who the client is and what it can do ride on each request; 2025 era: on initialize.
    const asked = (ctx: ServerContext): CallContext => {
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      return {
        clientInfo: () =>
          (envelope?.[CLIENT_INFO_META_KEY] as Implementation | undefined) ?? server.getClientVersion(),
        clientCaps: () =>
          (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ??
          server.getClientCapabilities(),
        signal: ctx.mcpReq.signal,
        inputResponses: ctx.mcpReq.inputResponses,
        requestState: () => ctx.mcpReq.requestState<ApprovalState>(),
        // a 2025 host takes requests of ours mid-call, on the call's own stream
        ...(options.era === "legacy"
          ? {
              elicit: (form, sendOptions) =>
                ctx.mcpReq.send(
                  {
                    method: "elicitation/create",
                    params: formRequest(form, server.getNegotiatedProtocolVersion()),
                  },
                  sendOptions,
                ),
            }
          : {}),
      };
    };
    const vidOf = async (ctx: ServerContext): Promise<string> => {
      if (options.vid !== undefined) return options.vid;
      const client = asked(ctx).clientInfo();
      return options.session ? options.session.vid(client) : clientVid(client?.name);
    };

    server.setRequestHandler("tools/list", async (request, ctx) => {
      onePage("tools/list", request.params?.cursor);
      return { tools: (await freshCatalogue(await vidOf(ctx))).tools };
    });

    server.setRequestHandler("tools/call", (request, ctx) =>
      vidOf(ctx).then((vid) =>
        callTool(request.params.name, request.params.arguments ?? {}, asked(ctx), vid),
      ),
    );

    // templates are tree values: a run reads them under its grant, as resources and tree.get
    server.setRequestHandler("prompts/list", async (request, ctx) => {
      onePage("prompts/list", request.params?.cursor);
      const loaded = await readPolicy();
      const vid = await vidOf(ctx);
      return { prompts: await listPrompts(tree, (key) => unreadable(key, loaded, vid) === undefined) };
    });

    server.setRequestHandler("prompts/get", async (request, ctx) => {
      const { name } = request.params;
      if (name === SYSTEM_PROMPT) return systemPromptResult(await source.systemPrompt(await vidOf(ctx)));
      const why = unreadable(`${MCP_PROMPTS_DIR}${name}`, await readPolicy(), await vidOf(ctx));
      if (why !== undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `prompt ${name} is not readable: ${why}`);
      const answer = await getTemplate(tree, name, request.params.arguments ?? {});
      if (!answer.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, answer.message);
      return answer.result;
    });

    server.setRequestHandler("resources/list", async (request, ctx) => {
      const cursor = request.params?.cursor;
      const problem = cursorProblem(cursor);
      if (problem) throw new ProtocolError(ProtocolErrorCode.InvalidParams, problem);
      return listMemory(tree, await readPolicy(), await vidOf(ctx), cursor);
    });

    server.setRequestHandler("resources/templates/list", async (request) => {
      onePage("resources/templates/list", request.params?.cursor);
      return { resourceTemplates: [TREE_TEMPLATE] };
    });

    /** The key a resource URI names, when run `vid` may read it (as tree.get decides); else the error to answer. */
    async function readableKey(uri: string, vid: string): Promise<string> {
      const key = uriToKey(uri);
      if (key === undefined)
        throw new ProtocolError(
          ProtocolErrorCode.ResourceNotFound,
          `${uri} is not a byteseek resource: use byteseek://tree/<key>`,
        );
      const why = unreadable(key, await readPolicy(), vid);
      if (why !== undefined)
        throw new ProtocolError(ProtocolErrorCode.ResourceNotFound, `${uri} is not readable: ${why}`);
      return key;
    }

    server.setRequestHandler("resources/read", async (request, ctx) => {
      const { uri } = request.params;
      const key = await readableKey(uri, await vidOf(ctx));
      let contents: Awaited<ReturnType<typeof readKey>>;
      try {
        contents = await readKey(tree, uri, key);
      } catch (err) {
        if ((err as { code?: string }).code === "TREE_INVALID_KEY")
          throw new ProtocolError(ProtocolErrorCode.ResourceNotFound, `${uri} names no valid key`);
        throw err;
      }
      if (!contents) throw new ProtocolError(ProtocolErrorCode.ResourceNotFound, `${key} does not exist`);
      return { contents };
    });

    // a subscription tells when a key changes: only of a valid key the run may read (one not written
    // yet included, so a client hears of its creation)
    server.setRequestHandler("resources/subscribe", async (request, ctx) => {
      const { uri } = request.params;
      const key = await readableKey(uri, await vidOf(ctx));
      try {
        parseKey(key);
      } catch {
        throw new ProtocolError(ProtocolErrorCode.ResourceNotFound, `${uri} names no valid key`);
      }
      instance.subscriptions.add(uri);
      return {};
    });
    server.setRequestHandler("resources/unsubscribe", async (request) => {
      instance.subscriptions.delete(request.params.uri);
      return {};
    });

    server.onerror = (err) => logger.debug({ err }, "MCP protocol error");
    if (options.track !== false) instances.add(instance);
    const prevClose = server.onclose;
    server.onclose = () => {
      instances.delete(instance);
      prevClose?.();
    };
    return instance;
  }

  /**
   * A plain 2026-era `tools/call` (mcp/fast-call.ts) answered without an instance, over HTTP or
   * stdio: the instance's own call, encoded as the SDK encodes its answer (a thrown error included).
   */
  async function answerPlain(
    call: PlainToolCall,
    vid: string | undefined,
    signal: AbortSignal,
  ): Promise<string> {
    try {
      const result = await callTool(
        call.name,
        call.args,
        {
          clientInfo: () => call.clientInfo,
          clientCaps: () => call.clientCaps,
          signal,
          requestState: () => undefined,
        },
        vid,
      );
      return encodeAnswer(call.id, { result }, identity);
    } catch (err) {
      logger.debug({ err }, "MCP call failed");
      return encodeAnswer(call.id, { error: err }, identity);
    }
  }

  return {
    create,
    /** A session's run maker (mcp/session-run.ts): one per connection or 2025-era HTTP session. */
    newSession: (transport: Transport): SessionRun => sessionRun(tree, transport),
    /** `tools/call` without an instance (the hot paths: mcp/fast-call.ts). */
    callTool,
    answerPlain,
    identity,
    /** Instances currently connected (stdio connections, 2025-era sessions). */
    instances: instances as ReadonlySet<McpInstance>,
  };
}

export type McpFactory = ReturnType<typeof createMcpFactory>;
