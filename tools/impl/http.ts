import { request } from "undici";
import type { z } from "zod";
import { IMPL_OUTPUT_BYTES } from "../cap.js";
import type { HttpImpl } from "../declaration.js";
import { ToolError } from "../errors.js";
import { hostAllowed } from "../policy.js";
import type { ToolContext, ToolOutput } from "../types.js";
import { argText, fillPlaceholders } from "./placeholders.js";

type HttpImplSpec = z.infer<typeof HttpImpl>;

/** The URL a call will reach: `{param}` parts filled, URL-encoded. */
export function httpUrl(impl: HttpImplSpec, args: Record<string, unknown>): URL {
  const url = new URL(fillPlaceholders(impl.url, args, encodeURIComponent) ?? impl.url);
  if (impl.method === "GET" || impl.method === "DELETE") {
    const used = new Set([...impl.url.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]));
    for (const [k, v] of Object.entries(args))
      if (!used.has(k) && v !== undefined) url.searchParams.set(k, argText(v));
  }
  return url;
}

/**
 * Runs an `http` impl through undici: the arguments as a JSON body (as the query string for GET
 * and DELETE), no redirects followed (undici's default), the response body read up to 50 KB. Only hosts the policy
 * lists are reached (the gate checks too; this is the last line). A status of 400 or more is a
 * failure that shows the start of the body.
 */
export async function runHttpImpl(
  impl: HttpImplSpec,
  args: Record<string, unknown>,
  ctx: ToolContext,
  allowedHosts: readonly string[],
): Promise<ToolOutput> {
  const url = httpUrl(impl, args);
  if (!hostAllowed(url, allowedHosts))
    throw new ToolError("denied", `the policy does not allow http tools to reach ${url.host}`);
  const withBody = impl.method !== "GET" && impl.method !== "DELETE";
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: impl.method,
      headers: {
        accept: "application/json, text/plain;q=0.9, */*;q=0.5",
        ...(withBody ? { "content-type": "application/json" } : {}),
        ...(impl.headers ?? {}),
      },
      body: withBody ? JSON.stringify(args) : undefined,
      signal: ctx.signal,
    });
  } catch (err) {
    if (ctx.signal.aborted) throw abortError(ctx.signal, url);
    throw new ToolError("failed", `request to ${url.origin} failed: ${(err as Error).message}`, {
      details: { url: url.href },
      cause: err,
    });
  }

  const chunks: Buffer[] = [];
  let bytes = 0;
  let truncated = false;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const room = IMPL_OUTPUT_BYTES - bytes;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        bytes += room;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      bytes += chunk.length;
    }
  } catch (err) {
    if (ctx.signal.aborted) throw abortError(ctx.signal, url);
    throw new ToolError("failed", `reading the response of ${url.origin} failed: ${(err as Error).message}`);
  } finally {
    if (truncated) res.body.destroy();
  }
  let text = Buffer.concat(chunks).toString("utf8");
  if (truncated) text += `\n[… response truncated at ${IMPL_OUTPUT_BYTES} bytes]`;
  const contentType = String(res.headers["content-type"] ?? "");
  const details = { url: url.href, status: res.statusCode, contentType, bytes, truncated };
  if (res.statusCode >= 400)
    throw new ToolError(
      "http_status",
      `${impl.method} ${url.href} answered ${res.statusCode}: ${text.slice(0, 2000) || "(empty body)"}`,
      { details },
    );
  return { text: text.length ? text : `(empty response, status ${res.statusCode})`, details };
}

function abortError(signal: AbortSignal, url: URL): ToolError {
  const reason = signal.reason;
  const base = reason instanceof ToolError ? reason : new ToolError("aborted", "the call was aborted");
  return new ToolError(base.code, `${base.message} (request to ${url.origin})`, {
    details: { url: url.href },
  });
}
