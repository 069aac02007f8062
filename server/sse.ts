/** The server's side of an event stream: its head and a writer respecting backpressure (the format: shared/sse.ts). */
import type { ServerResponse } from "node:http";
import type { Tree } from "../tree/index.js";
import { answerHeaders } from "./answer.js";

/**
 * The head of an event stream: the headers every answer carries (server/answer.ts), which a
 * hijacked reply does not get from the onSend hook, and those that keep proxies from buffering.
 */
export function sseHead(tree: Tree, requestId: string): Record<string, string> {
  return {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    ...answerHeaders(tree, requestId, false),
  };
}

/** Writes a chunk; when the socket's buffer is full, waits until it drains or the stream ends. */
export async function writeSse(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<void> {
  if (res.writableEnded || res.destroyed || signal.aborted) return;
  if (res.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
