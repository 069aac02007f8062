/**
 * MCP over stdio (`byteseek mcp`), and over the relays' socket (mcp/share.ts), which carries the
 * same line-delimited messages: the SDK's `serveStdio` answers both eras on one connection (2025
 * initialize, or 2026-07-28 discovery), an instance from the factory serving it; tree changes reach
 * it as notifications (2025) or on its listen stream (2026).
 *
 * Once a connection is pinned to the 2026-07-28 revision, its plain `tools/call`s are answered
 * beside the SDK, as over HTTP (mcp/fast-call.ts): the call is the instance's own handler
 * (`factory.callTool`) and the answer the SDK's bytes, without the SDK's per-request envelope
 * validation and codec, which cost more than the call. Everything else goes to the SDK.
 */
import type { Readable, Writable } from "node:stream";
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/server";
import { type StdioServerHandle, StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Logger } from "pino";
import { fastLanesByDefault } from "../tree/fast-lanes.js";
import { type PlainToolCall, stdioPlainCall } from "./fast-call.js";
import type { LiveTree } from "./live.js";
import { notifyInstances } from "./notify.js";
import { type ListenFilter, ListenFilters, type McpFactory, type McpInstance } from "./server.js";

export interface StdioOptions {
  factory: McpFactory;
  live: LiveTree;
  logger: Logger;
  /** The run every call belongs to; absent: `mcp-<client name>`. */
  vid?: string;
  /** Plain 2026-era calls answered beside the SDK (default: BYTESEEK_FAST, on; tree/fast-lanes.ts). */
  plainCalls?: boolean;
}

export interface StdioMcp {
  close(): Promise<void>;
}

/** Serves this process's stdin/stdout. */
export function serveMcpStdio(options: StdioOptions): StdioMcp {
  const { factory, live, logger, vid, plainCalls } = options;
  const instances = new Set<McpInstance>();
  const handle = serveConnection({
    factory,
    logger,
    input: process.stdin,
    output: process.stdout,
    onInstance: (instance) => instances.add(instance),
    ...(vid === undefined ? {} : { vid }),
    ...(plainCalls === undefined ? {} : { plainCalls }),
  });
  const unsubscribe = live.subscribe((change) => notifyInstances(instances, change));
  return {
    async close() {
      unsubscribe();
      await handle.close();
    },
  };
}

export interface ConnectionOptions {
  factory: McpFactory;
  logger: Logger;
  input: Readable;
  output: Writable;
  /** The run every call belongs to; absent: the connection's own, `mcp-<client>-<n>` (mcp/session-run.ts). */
  vid?: string;
  /** How the session reached this process (said in its run's `/vthread/<vid>/client`). */
  transport?: "stdio" | "relay";
  /** Told the instance the connection is pinned to, for change notifications. */
  onInstance(instance: McpInstance): void;
  /**
   * Answer plain 2026-era calls beside the SDK (the MCP fast lane); false leaves every message to
   * the SDK (the reference lane). Default: BYTESEEK_FAST (on; tree/fast-lanes.ts).
   */
  plainCalls?: boolean;
}

/** Serves one line-delimited connection (stdio, or a relay's socket) until it closes. */
export function serveConnection(options: ConnectionOptions): StdioServerHandle {
  const { factory, logger, input, output, vid, onInstance } = options;
  let era: "legacy" | "modern" | undefined;
  const plain = options.plainCalls ?? fastLanesByDefault();
  // one connection, one session: its calls are one run
  const session = vid === undefined ? factory.newSession(options.transport ?? "stdio") : undefined;
  const transport = new PlainCalls(new StdioServerTransport(input, output), {
    era: () => (plain ? era : undefined),
    answer: async (call, signal) =>
      factory.answerPlain(call, vid ?? (await session?.vid(call.clientInfo)), signal),
    write: (line) => output.write(line),
  });
  return serveStdio(
    (ctx) => {
      era = ctx.era;
      const instance = factory.create({
        era: ctx.era,
        track: false,
        ...(vid === undefined ? {} : { vid }),
        ...(session === undefined ? {} : { session }),
      });
      if (ctx.era === "modern") instance.listening = transport.listening;
      onInstance(instance);
      return instance.server;
    },
    { transport, onerror: (err) => logger.debug({ err }, "MCP stdio error") },
  );
}

interface PlainCallsOptions {
  era(): "legacy" | "modern" | undefined;
  answer(call: PlainToolCall, signal: AbortSignal): Promise<string>;
  write(line: string): void;
}

/** A connection's transport with its plain 2026-era `tools/call`s answered here (see the header). */
class PlainCalls implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Calls answered here and still running, by id: a `notifications/cancelled` aborts them. */
  private readonly running = new Map<string | number, AbortController>();
  /** The client's open listen streams: opened by its request, ended by their answer or its cancel. */
  readonly listening = new ListenFilters();

  constructor(
    private readonly inner: Transport,
    private readonly options: PlainCallsOptions,
  ) {}

  async start(): Promise<void> {
    this.inner.onclose = () => {
      for (const ac of this.running.values()) ac.abort();
      this.onclose?.();
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onmessage = (message, extra) => {
      if (!this.answered(message)) this.onmessage?.(message, extra);
    };
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ("id" in message && !("method" in message) && message.id !== undefined) this.listening.end(message.id);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion = (version: string): void => {
    this.inner.setProtocolVersion?.(version);
  };

  /** Whether `message` is a call this answers (else the SDK's instance gets it). */
  private answered(message: JSONRPCMessage): boolean {
    if ("method" in message && message.method === "subscriptions/listen" && "id" in message) {
      const filter = (message.params as { notifications?: unknown } | undefined)?.notifications;
      if (filter !== null && typeof filter === "object")
        this.listening.add(message.id, filter as ListenFilter);
    }
    if ("method" in message && message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined) {
        this.running.get(id)?.abort();
        this.listening.end(id);
      }
      return false;
    }
    if (this.options.era() !== "modern") return false;
    const call = stdioPlainCall(message);
    // An id still running is left to the SDK, which answers it as it does.
    if (call === undefined || this.running.has(call.id)) return false;
    const ac = new AbortController();
    this.running.set(call.id, ac);
    void this.options.answer(call, ac.signal).then((text) => {
      if (this.running.get(call.id) === ac) this.running.delete(call.id);
      // A cancelled request is not answered (as the SDK does).
      if (!ac.signal.aborted) this.options.write(`${text}\n`);
    });
    return true;
  }
}
