/**
 * `GET /v1/grep/<prefix/>?pattern=…`: keys and lines of values below a directory that match, a page
 * at a time (tree/grep.ts: bounded by matches, bytes read and time, yielding to other requests as it
 * goes). MCP registry entries are searched with their secret fields masked, as an export shows them.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { maskedView } from "../../tools/mcp/masked-view.js";
import { grep } from "../../tree/grep.js";
import { ErrorJson, GrepResultJson } from "../../tree/http/index.js";
import { parseDirKey } from "../../tree/path.js";
import type { Tree } from "../../tree/types.js";
import { keyFromUrl } from "../key-path.js";
import type { RouteDoc } from "../openapi.js";
import { GrepQuery, keyRoutes } from "../schemas.js";

export const GREP_PREFIX = "/v1/grep";
/** One request's time budget, ms: past it the answer says where to go on. */
const GREP_MS = 2000;

const doc = {
  wildcard: "prefix",
  responses: {
    200: {
      examples: {
        matches: {
          matches: [
            { key: "/notes/today", line: 2, preview: "call Ada about the hello-world demo" },
            { key: "/notes/hello", preview: "/notes/hello" },
          ],
          next: "/notes/hello",
          scanned: { keys: 120, bytes: 48213 },
        },
      },
    },
  },
} satisfies RouteDoc;

export interface GrepRoutesOptions {
  tree: Tree;
}

export const grepRoutes: FastifyPluginAsyncZod<GrepRoutesOptions> = async function grepRoutes(app, { tree }) {
  for (const { url, hide, params } of keyRoutes(GREP_PREFIX)) {
    app.get(
      url,
      {
        schema: {
          hide,
          summary: "Search the keys and values below a directory for a text or a regular expression",
          params,
          querystring: GrepQuery,
          doc,
          response: { 200: GrepResultJson, 400: ErrorJson, 401: ErrorJson, 404: ErrorJson },
        },
      },
      async function search(req, reply) {
        const prefix = parseDirKey(keyFromUrl(req.url, GREP_PREFIX)).key;
        const q = req.query;
        // a client that goes away stops the search
        const gone = new AbortController();
        reply.raw.once("close", () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        return grep(tree, prefix, {
          pattern: q.pattern,
          ...(q.regex ? { regex: true } : {}),
          ...(q.ignoreCase ? { ignoreCase: true } : {}),
          ...(q.keys === false ? { keys: false } : {}),
          ...(q.values === false ? { values: false } : {}),
          ...(q.limit !== undefined ? { limit: q.limit } : {}),
          ...(q.after !== undefined ? { after: q.after } : {}),
          maxMs: GREP_MS,
          signal: gone.signal,
          view: maskedView,
        });
      },
    );
  }
};
