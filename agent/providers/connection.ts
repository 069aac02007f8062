import { type Logger, pino } from "pino";
import type { Dispatcher } from "undici";
import type { LlmConfig } from "../llm-config.js";
import { type Assembler, createAssembler } from "./assembler.js";
import type { RetryOptions } from "./retry.js";
import { createToolNameMap, type ToolNameMap } from "./tool-names.js";
import { createTransport, type Transport } from "./transport.js";
import type { ChatRequest, ChatResponse, CompleteOptions, Provider } from "./types.js";

/** What a provider may be handed; all optional. */
export interface ProviderDeps {
  /** Share a dispatcher between providers; by default each provider opens its own keep-alive Agent. */
  dispatcher?: Dispatcher;
  /** Retries are logged here (never the key, never headers). Default: silent. */
  logger?: Logger;
  /** Backoff tuning (tests use small delays); the number of retries comes from the config. */
  retry?: Omit<RetryOptions, "maxRetries">;
  /** Ask for a streamed reply (default true); false asks for one JSON body. */
  stream?: boolean;
}

/** What sets one wire format apart; the connection, request and reply plumbing are shared. */
export interface WireFormat {
  api: Provider["api"];
  /** Appended to the configured URL: `/chat/completions`, `/v1/messages`. */
  path: string;
  /** Headers beside content-type and accept (the version, the key in the API's own header). */
  headers(config: LlmConfig): Record<string, string>;
  /** The request body, before JSON. */
  toWire(request: ChatRequest, names: ToolNameMap, config: LlmConfig, stream: boolean): unknown;
  /** Reads a reply that came as one JSON body. */
  readJson(chunks: AsyncIterable<Uint8Array>, out: Assembler, endpoint: string): Promise<ChatResponse>;
  /** Reads a streamed (SSE) reply; `redact` keeps the key out of error text. */
  readStream(
    chunks: AsyncIterable<Uint8Array>,
    out: Assembler,
    endpoint: string,
    redact: (text: string) => string,
  ): Promise<ChatResponse>;
}

/** A provider speaking `format` to `config.url`: one keep-alive connection, retries, tool names mapped both ways. */
export function createWireProvider(config: LlmConfig, deps: ProviderDeps, format: WireFormat): Provider {
  const transport = openTransport(config, deps);
  const stream = deps.stream ?? true;
  const endpoint = `${config.url}${format.path}`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: stream ? "text/event-stream" : "application/json",
    ...format.headers(config),
  };
  return {
    api: format.api,
    model: config.model,
    async complete(request: ChatRequest, { signal, onEvent }: CompleteOptions): Promise<ChatResponse> {
      const names = createToolNameMap(request.tools, request.messages);
      const body = JSON.stringify(format.toWire(request, names, config, stream));
      const res = await transport.post(endpoint, headers, body, { signal, ...(onEvent ? { onEvent } : {}) });
      const out = createAssembler(names, onEvent);
      return res.contentType.includes("json")
        ? format.readJson(res.chunks, out, endpoint)
        : format.readStream(res.chunks, out, endpoint, transport.redact);
    },
    close: transport.close,
  };
}

function openTransport(config: LlmConfig, deps: ProviderDeps): Transport & { close(): Promise<void> } {
  const shared = deps.dispatcher;
  // the provider's own keep-alive Agent, made at its first request
  let own: Promise<Dispatcher> | undefined;
  async function dispatcher(): Promise<Dispatcher> {
    if (shared) return shared;
    own ??= import("undici").then(
      ({ Agent }) => new Agent({ keepAliveTimeout: 30_000, connect: { timeout: config.timeoutMs } }),
    );
    return own;
  }
  const logger = (deps.logger ?? pino({ enabled: false })).child({ api: config.api, model: config.model });
  const transport = createTransport({
    dispatcher,
    logger,
    timeoutMs: config.timeoutMs,
    retry: { ...deps.retry, maxRetries: config.maxRetries },
    ...(config.key === undefined ? {} : { secret: config.key }),
  });
  return {
    ...transport,
    async close() {
      await (await own)?.close();
    },
  };
}
