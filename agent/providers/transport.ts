import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import { AgentError, type AgentErrorCode } from "../errors.js";
import { backoffDelay, parseRetryAfter, type RetryOptions, sleep } from "./retry.js";
import type { StreamEvent } from "./types.js";

/**
 * One POST to a model provider, with the retry policy both adapters share: 429, 5xx and network
 * failures are retried with backoff (honouring Retry-After) as long as no byte of the reply body
 * has arrived; after that a failure is final, since the reply has begun to be consumed.
 */
export interface TransportDeps {
  /** The connections requests go through: asked for at the first request (undici is loaded then). */
  dispatcher: () => Promise<Dispatcher>;
  logger: Logger;
  /** Longest wait for the response headers, and for each next chunk of the body. */
  timeoutMs: number;
  retry: RetryOptions;
  /** The API key: scrubbed from every message built from what the server sent. */
  secret?: string;
}

export interface PostOptions {
  signal: AbortSignal;
  onEvent?: (event: StreamEvent) => void;
}

/** A successful response whose body has started: `chunks` yields it, first chunk included. */
export interface OpenResponse {
  status: number;
  contentType: string;
  /** Read errors come out as AgentErrors: LLM_STREAM_CUT, LLM_TIMEOUT or LLM_ABORTED. */
  chunks: AsyncIterable<Uint8Array>;
}

export interface Transport {
  post(
    url: string,
    headers: Record<string, string>,
    body: string,
    options: PostOptions,
  ): Promise<OpenResponse>;
  /** Replaces the secret in `text`. */
  redact(text: string): string;
}

interface Failure {
  retryable: boolean;
  code: AgentErrorCode;
  message: string;
  status?: number;
  retryAfterMs?: number;
  cause?: unknown;
}

const ERROR_BODY_LIMIT = 16 * 1024;

export function createTransport({ dispatcher, logger, timeoutMs, retry, secret }: TransportDeps): Transport {
  const redact = (text: string): string =>
    secret && secret.length >= 4 ? text.replaceAll(secret, "[redacted]") : text;
  const maxRetryAfterMs = retry.maxRetryAfterMs ?? 60_000;

  async function post(
    url: string,
    headers: Record<string, string>,
    body: string,
    { signal, onEvent }: PostOptions,
  ): Promise<OpenResponse> {
    const where = describeUrl(url);
    // at the first request, not at start: a process that asks no model never loads undici
    const [{ request }, pool] = await Promise.all([import("undici"), dispatcher()]);
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) throw aborted(where, signal.reason);
      let failure: Failure;
      try {
        const res = await request(url, {
          method: "POST",
          headers,
          body,
          signal,
          dispatcher: pool,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        if (res.statusCode >= 200 && res.statusCode < 300) {
          const iterator = res.body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
          try {
            const first = await iterator.next();
            return {
              status: res.statusCode,
              contentType: String(res.headers["content-type"] ?? ""),
              chunks: rest(first, iterator, where, signal),
            };
          } catch (err) {
            if (signal.aborted) throw aborted(where, signal.reason);
            failure = networkFailure(err, where, timeoutMs);
          }
        } else {
          const text = redact(await readLimited(res.body));
          failure = statusFailure(res.statusCode, res.headers, text, where);
        }
      } catch (err) {
        if (err instanceof AgentError) throw err;
        if (signal.aborted) throw aborted(where, signal.reason);
        failure = networkFailure(err, where, timeoutMs);
      }

      const attempts = `${attempt} attempt${attempt === 1 ? "" : "s"}`;
      if (!failure.retryable || attempt > retry.maxRetries) {
        throw new AgentError(
          failure.code,
          failure.retryable ? `${failure.message} (gave up after ${attempts})` : failure.message,
          { ...(failure.status === undefined ? {} : { status: failure.status }), attempts: attempt },
          failure.cause,
        );
      }
      if (failure.retryAfterMs !== undefined && failure.retryAfterMs > maxRetryAfterMs) {
        throw new AgentError(
          failure.code,
          `${failure.message}; the server asks to wait ${Math.ceil(failure.retryAfterMs / 1000)} s, longer than the ${Math.ceil(maxRetryAfterMs / 1000)} s we wait (after ${attempts})`,
          { status: failure.status, attempts: attempt, retryAfterMs: failure.retryAfterMs },
        );
      }
      const delayMs = failure.retryAfterMs ?? backoffDelay(attempt - 1, retry);
      logger.warn(
        { attempt, delayMs, status: failure.status, code: failure.code },
        `model call failed, retrying: ${failure.message}`,
      );
      onEvent?.({
        type: "retry",
        attempt,
        delayMs,
        reason: failure.message,
        ...(failure.status === undefined ? {} : { status: failure.status }),
      });
      try {
        await sleep(delayMs, signal);
      } catch (err) {
        throw aborted(where, err);
      }
    }
  }

  return { post, redact };
}

async function* rest(
  first: IteratorResult<Uint8Array>,
  iterator: AsyncIterator<Uint8Array>,
  where: string,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  let next = first;
  try {
    while (!next.done) {
      yield next.value;
      next = await iterator.next();
    }
  } catch (err) {
    if (signal.aborted) throw aborted(where, signal.reason);
    if (errorCode(err) === "UND_ERR_BODY_TIMEOUT")
      throw new AgentError(
        "LLM_TIMEOUT",
        `the reply from ${where} stalled mid-way (no data for too long)`,
        {},
        err,
      );
    throw new AgentError(
      "LLM_STREAM_CUT",
      `the reply from ${where} was cut off mid-way (${errorText(err)}); the reply is incomplete`,
      {},
      err,
    );
  } finally {
    // Stops the body when the reader leaves early (an error in a handler): the socket is not left half-read.
    if (!next.done) await iterator.return?.();
  }
}

function statusFailure(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  where: string,
): Failure {
  const said = serverMessage(body);
  const answered = `${where} answered ${status}${said ? `: ${said}` : ""}`;
  const retryAfterMs = parseRetryAfter(headers);
  const retryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status === 429)
    return {
      retryable: true,
      code: "LLM_RATE_LIMITED",
      status,
      message: `rate limited: ${answered}`,
      ...retryAfter,
    };
  if (status >= 500) return { retryable: true, code: "LLM_HTTP", status, message: answered, ...retryAfter };
  let hint = "";
  if (status === 401 || status === 403) hint = "; check BYTESEEK_LLM_KEY (or /byteseek/llm/key)";
  else if (status === 404)
    hint = "; check BYTESEEK_LLM_URL and BYTESEEK_LLM_MODEL (or /byteseek/llm/url, /model)";
  return { retryable: false, code: "LLM_HTTP", status, message: `${answered}${hint}` };
}

function networkFailure(err: unknown, where: string, timeoutMs: number): Failure {
  const code = errorCode(err);
  if (
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT"
  )
    return {
      retryable: true,
      code: "LLM_TIMEOUT",
      message: `no reply from ${where} within ${timeoutMs} ms`,
      cause: err,
    };
  return {
    retryable: true,
    code: "LLM_NETWORK",
    message: `could not reach ${where} (${errorText(err)}); check BYTESEEK_LLM_URL (or /byteseek/llm/url)`,
    cause: err,
  };
}

function aborted(where: string, reason: unknown): AgentError {
  return new AgentError("LLM_ABORTED", `the call to ${where} was aborted`, {}, reason);
}

/** The error message a provider put in its error body ({error: {message}} in both APIs), short. */
function serverMessage(body: string): string {
  let text = body.trim();
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message =
      typeof parsed.error === "string"
        ? parsed.error
        : typeof parsed.error?.message === "string"
          ? parsed.error.message
          : typeof parsed.message === "string"
            ? parsed.message
            : undefined;
    if (message !== undefined) text = message;
  } catch {
    // Not JSON: the text as it came.
  }
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

async function readLimited(body: AsyncIterable<Uint8Array> & { destroy(): unknown }): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      parts.push(Buffer.from(chunk));
      size += chunk.byteLength;
      if (size >= ERROR_BODY_LIMIT) break;
    }
  } catch {
    // An error body that breaks off is still worth what arrived.
  } finally {
    body.destroy();
  }
  return Buffer.concat(parts).subarray(0, ERROR_BODY_LIMIT).toString("utf8");
}

/** Origin and path only: a query string may carry credentials. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "the model provider";
  }
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function errorText(err: unknown): string {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
