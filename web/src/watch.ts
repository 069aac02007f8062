import type { Api } from "./api.js";
import { encodeKeyPath } from "./keys.js";
import { eventData, readEvents, type SseEvent } from "./sse.js";
import type { WatchBatchJson, WatchEventJson, WatchProgressJson } from "./wire.js";

/** One change, as the watch stream reports it. */
export type Change = WatchEventJson;

export type WatchState =
  | { state: "connecting" }
  | { state: "live"; rev: number }
  | { state: "retrying"; inMs: number; reason: string }
  | { state: "stopped" };

export interface WatchHandlers {
  /** The changes of one revision. */
  changes(changes: Change[], rev: number): void;
  /** The server no longer has the history to resume from: everything shown must be re-read. */
  relist(): void;
  state(s: WatchState): void;
}

/**
 * Follows `GET /v1/watch/<prefix>` (server-sent events). EventSource cannot send an
 * Authorization header, so the stream is read with fetch and parsed here. After a drop it
 * reconnects by itself with `Last-Event-ID`, backing off up to 5 s, and so misses nothing.
 */
export function startWatch(api: Api, prefix: string, sinceRev: number, handlers: WatchHandlers) {
  // The last revision seen: the stream resumes after it (?since= and Last-Event-ID are exclusive).
  let lastId = sinceRev;
  let stopped = false;
  let controller: AbortController | null = null;
  let delay = 250;
  let wake: (() => void) | null = null;

  async function run(): Promise<void> {
    let first = true;
    while (!stopped) {
      handlers.state({ state: "connecting" });
      controller = new AbortController();
      let reason = "the connection closed";
      try {
        const headers: Record<string, string> = { accept: "text/event-stream" };
        let url = `/v1/watch/${encodeKeyPath(prefix)}`;
        if (first) url += `?since=${lastId}`;
        else headers["last-event-id"] = String(lastId);
        const res = await api.request(url, { headers, signal: controller.signal });
        if (res.status === 401) {
          // The user declined to give a token: asking again every few seconds would nag.
          await res.body?.cancel();
          break;
        }
        if (!res.ok || !res.body) {
          reason = `the server answered ${res.status}`;
          await res.body?.cancel();
        } else {
          first = false;
          delay = 250;
          handlers.state({ state: "live", rev: lastId });
          for await (const ev of readEvents(res.body)) onEvent(ev);
        }
      } catch (err) {
        if (stopped) break;
        reason = (err as Error).message || "network error";
      }
      if (stopped) break;
      handlers.state({ state: "retrying", inMs: delay, reason });
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, delay);
      });
      wake = null;
      delay = Math.min(delay * 2, 5000);
    }
    handlers.state({ state: "stopped" });
  }

  function onEvent(ev: SseEvent): void {
    const data = eventData(ev);
    if (ev.event === "compacted") {
      // The server no longer has what we missed (an ErrorJson body with `relistFrom`): re-read
      // what is shown, then follow from its current revision (the stream ends here; the loop reconnects).
      const from = Number((data as { relistFrom?: unknown } | undefined)?.relistFrom);
      if (Number.isFinite(from) && from > 0) lastId = from;
      handlers.relist();
      return;
    }
    if (ev.event === "error") {
      const message = (data as { message?: unknown } | undefined)?.message;
      handlers.state({ state: "retrying", inMs: delay, reason: String(message ?? "watch error") });
      return;
    }
    if (ev.event === "progress") {
      // Progress tells the current revision; it does not move our place (nothing was missed).
      const rev = Number((data as WatchProgressJson | undefined)?.rev ?? 0);
      handlers.state({ state: "live", rev: Math.max(lastId, rev) });
      return;
    }
    // A change: one revision's batch, its revision also the event's id.
    const batch = data as WatchBatchJson | undefined;
    const id = Number(ev.id);
    const rev = ev.id && Number.isFinite(id) ? id : Number(batch?.rev ?? 0);
    if (rev > lastId) lastId = rev;
    if (batch?.events.length) handlers.changes(batch.events, rev);
    handlers.state({ state: "live", rev: lastId });
  }

  void run();
  return {
    stop(): void {
      stopped = true;
      controller?.abort();
      wake?.();
    },
    /** Drops the connection now (it comes back by itself). */
    reconnectNow(): void {
      delay = 0;
      controller?.abort();
      wake?.();
    },
  };
}
