import type { Api, NodeKind } from "./api.js";
import { encodeKeyPath } from "./keys.js";

/** One change, as the watch stream reports it. */
export interface Change {
  type: "put" | "delete" | "deltree";
  key: string;
  kind?: NodeKind;
  rev: number;
  version?: number;
}

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
          await readEvents(res.body, onEvent);
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

  function onEvent(ev: { event: string; id: string; data: string }): void {
    let data: unknown;
    try {
      data = ev.data ? JSON.parse(ev.data) : undefined;
    } catch {
      data = undefined;
    }
    const d = data as Record<string, unknown> | undefined;
    const id = Number(ev.id);
    const rev = Number.isFinite(id) && ev.id !== "" ? id : Number(d?.rev ?? 0);
    if (ev.event === "compacted") {
      // The server no longer has what we missed: re-read what is shown, then follow from its
      // current revision (the stream ends here; the loop reconnects).
      const from = Number(d?.relistFrom);
      if (Number.isFinite(from) && from > 0) lastId = from;
      handlers.relist();
      return;
    }
    if (ev.event === "error") {
      handlers.state({ state: "retrying", inMs: delay, reason: String(d?.message ?? "watch error") });
      return;
    }
    if (ev.event === "progress") {
      // Progress tells the current revision; it does not move our place (nothing was missed).
      handlers.state({ state: "live", rev: Math.max(lastId, rev) });
      return;
    }
    const list = Array.isArray(d?.events)
      ? (d.events as Change[])
      : d && typeof d.key === "string"
        ? [d as unknown as Change]
        : [];
    if (rev > lastId) lastId = rev;
    if (list.length) handlers.changes(list, rev);
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

/** Parses a text/event-stream body (the WHATWG rules: fields, blank line ends an event). */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (ev: { event: string; id: string; data: string }) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let id = "";
  let data: string[] = [];
  while (true) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let nl = buffer.search(/\r\n|\r|\n/);
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (data.length || event) onEvent({ event: event || "message", id, data: data.join("\n") });
        event = "";
        data = [];
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "data") data.push(val);
        else if (field === "event") event = val;
        else if (field === "id") id = val;
      }
      nl = buffer.search(/\r\n|\r|\n/);
    }
  }
}
