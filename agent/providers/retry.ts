/** Backoff and Retry-After: how long to wait before the next attempt. */

export interface RetryOptions {
  /** Attempts after the first (from the configuration's maxRetries). */
  maxRetries: number;
  /** First backoff step; doubles each retry (default 500 ms). */
  baseDelayMs?: number;
  /** Cap on one backoff step (default 30 s). */
  maxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the call fails at once (default 60 s). */
  maxRetryAfterMs?: number;
}

/**
 * The delay before retry number `retry` (0 for the first): exponential, capped, with "equal
 * jitter" (half fixed, half random) so clients that failed together do not retry together.
 */
export function backoffDelay(
  retry: number,
  { baseDelayMs = 500, maxDelayMs = 30_000 }: Pick<RetryOptions, "baseDelayMs" | "maxDelayMs"> = {},
  random: () => number = Math.random,
): number {
  const step = Math.min(maxDelayMs, baseDelayMs * 2 ** retry);
  return Math.round(step / 2 + (step / 2) * random());
}

/**
 * Milliseconds a response asks us to wait, from `retry-after-ms` (OpenAI) or `Retry-After`
 * (seconds, or an HTTP date); undefined when neither is there or readable.
 */
export function parseRetryAfter(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number | undefined {
  const ms = first(headers["retry-after-ms"]);
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const value = first(headers["retry-after"])?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
