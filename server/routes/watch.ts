/**
 * `GET /v1/watch/<prefix>?since=REV`: server-sent events. One `change` event per revision (its id
 * is the revision, its data `{rev, events}`); a reconnecting client sends `Last-Event-ID` and gets
 * exactly what it missed. A `progress` event (no id) carries the current revision on connect and
 * periodically. A revision no longer retained gets one `compacted` event — re-list, then watch from
 * `relistFrom` — and the stream ends. The watch stops when the client goes away or the server closes.
 * The answer's `X-Byteseek-Progress-Ms` header names the progress interval: a client that hears
 * nothing for longer than that (and its own margin) takes the stream for stalled and reconnects.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { formatEvent } from "../../shared/sse.js";
import { isTreeError } from "../../tree/errors.js";
import {
  batchToJson,
  ErrorJson,
  PROGRESS_INTERVAL_HEADER,
  WatchBatchJson,
  WatchProgressJson,
} from "../../tree/http/index.js";
import { parseKey } from "../../tree/path.js";
import type { Tree } from "../../tree/types.js";
import { mapError, ServerError } from "../errors.js";
import { keyFromUrl } from "../key-path.js";
import type { RouteDoc } from "../openapi.js";
import { keyRoutes, WatchQuery, WatchStream } from "../schemas.js";
import { sseHead, writeSse } from "../sse.js";

export const WATCH_PREFIX = "/v1/watch";

/** What the document says beyond the schemas (server/openapi.ts). */
const doc = {
  wildcard: "prefix",
  headers: {
    "Last-Event-ID":
      "the id (revision) of the last change event read: replay what came after it, then follow; wins over ?since",
  },
  responses: {
    200: {
      headers: { "X-Byteseek-Progress-Ms": true },
      media: "text/event-stream",
      events: { change: WatchBatchJson, progress: WatchProgressJson, compacted: ErrorJson.shape.error },
      examples: {
        stream: [
          "retry: 1000",
          "",
          "event: progress",
          'data: {"rev":40}',
          "",
          "id: 41",
          "event: change",
          'data: {"rev":41,"events":[{"type":"put","key":"/notes/today","kind":"char/utf8","value":"hello world","rev":41,"prevRev":40,"version":4}]}',
          "",
          "",
        ].join("\n"),
      },
    },
    503: { headers: { "Retry-After": true } },
  },
} satisfies RouteDoc;

export interface WatchRoutesOptions {
  tree: Tree;
  /** Open watches; the app aborts them all when it closes. */
  watches: Set<AbortController>;
  /** Interval between progress events, ms. */
  progressMs: number;
  /** Watches open at once at most; beyond, 503 with Retry-After. */
  maxWatches: number;
}

/** Seconds a client refused for too many watches is asked to wait. */
export const WATCH_RETRY_AFTER_S = 5;

export const watchRoutes: FastifyPluginAsyncZod<WatchRoutesOptions> = async function watchRoutes(
  app,
  { tree, watches, progressMs, maxWatches },
) {
  let open = 0;
  for (const { url, hide, params } of keyRoutes(WATCH_PREFIX)) {
    app.get(
      url,
      {
        // A HEAD would open a stream nobody reads.
        exposeHeadRoute: false,
        schema: {
          hide,
          summary:
            "Follow changes under a prefix as server-sent events (resume with Last-Event-ID or ?since=REV)",
          params,
          querystring: WatchQuery,
          doc,
          response: { 200: WatchStream, 400: ErrorJson, 401: ErrorJson, 503: ErrorJson },
        },
      },
      async function watchPrefix(req, reply) {
        const prefix = parseKey(keyFromUrl(req.url, WATCH_PREFIX)).key;
        const since = lastEventId(req.headers["last-event-id"]) ?? req.query.since;
        const started = performance.now();
        if (open >= maxWatches) {
          reply.header("retry-after", String(WATCH_RETRY_AFTER_S));
          throw new ServerError(
            "HTTP_TOO_MANY_WATCHES",
            `the server has ${open} watches open, its limit (BYTESEEK_MAX_WATCHES=${maxWatches}): retry after ${WATCH_RETRY_AFTER_S} s, or close a watch you no longer read`,
            { limit: maxWatches },
          );
        }
        open++;
        const ac = new AbortController();
        const { signal } = ac;
        watches.add(ac);
        const res = reply.raw;
        res.on("close", () => ac.abort());
        reply.hijack();
        // the heartbeat's interval: a client that hears nothing for longer knows the stream stalled
        res.writeHead(200, { ...sseHead(tree, req.id), [PROGRESS_INTERVAL_HEADER]: String(progressMs) });
        const progress = () => writeSse(res, formatEvent("progress", { rev: tree.revision() }), signal);
        await writeSse(res, "retry: 1000\n\n", signal);
        await progress();
        const timer = setInterval(() => void progress(), progressMs);
        let outcome = "closed";
        try {
          const options = since === undefined ? { signal } : { signal, fromRev: since + 1 };
          for await (const batch of tree.watch(prefix, options)) {
            await writeSse(res, formatEvent("change", batchToJson(batch), batch.rev), signal);
            if (signal.aborted) break;
          }
        } catch (err) {
          if (isTreeError(err, "TREE_COMPACTED")) {
            outcome = "compacted";
            await writeSse(res, formatEvent("compacted", mapError(err).body.error), signal);
          } else if (!signal.aborted) {
            const mapped = mapError(err);
            outcome = "error";
            if (!mapped.expected) req.log.error({ err }, "watch failed");
            await writeSse(res, formatEvent("error", mapped.body.error), signal);
          }
        } finally {
          clearInterval(timer);
          watches.delete(ac);
          open--;
          if (!res.writableEnded) res.end();
          req.log.info(
            {
              method: req.method,
              url: req.url.split("?")[0],
              status: 200,
              ms: performance.now() - started,
              outcome,
            },
            "watch ended",
          );
        }
      },
    );
  }
};

function lastEventId(raw: string | string[] | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw[0]! : raw).trim();
  if (text === "") return undefined;
  if (!/^[0-9]{1,15}$/.test(text))
    throw new ServerError(
      "HTTP_INVALID_HEADER",
      `Last-Event-ID must be a revision, got ${JSON.stringify(text.slice(0, 40))}`,
      {
        header: "Last-Event-ID",
      },
    );
  return Number(text);
}
