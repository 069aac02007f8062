import { type Logger, pino } from "pino";
import { Agent, type Dispatcher } from "undici";
import type { LlmConfig } from "../llm-config.js";
import type { RetryOptions } from "./retry.js";
import { createTransport, type Transport } from "./transport.js";

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

export interface Connection {
  transport: Transport;
  logger: Logger;
  close(): Promise<void>;
}

export function openConnection(config: LlmConfig, deps: ProviderDeps): Connection {
  const owned = deps.dispatcher === undefined;
  const dispatcher =
    deps.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connect: { timeout: config.timeoutMs } });
  const logger = (deps.logger ?? pino({ enabled: false })).child({ api: config.api, model: config.model });
  const transport = createTransport({
    dispatcher,
    logger,
    timeoutMs: config.timeoutMs,
    retry: { ...deps.retry, maxRetries: config.maxRetries },
    ...(config.key === undefined ? {} : { secret: config.key }),
  });
  return {
    transport,
    logger,
    async close() {
      if (owned) await dispatcher.close();
    },
  };
}
