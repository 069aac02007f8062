/**
 * `/v1/tree/<key>`: GET a value (ETag = version, `?history=1`) or list a directory (`<dir/>`,
 * paginated, `?recursive=1`, `?depth=N`, `?values=0`); PUT a value (or create a directory);
 * POST to a directory appends; DELETE a value or a whole directory. See `key-path.ts` for keys.
 */
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { TreeError } from "../../tree/errors.js";
import {
  DeleteJson,
  ErrorJson,
  HistoryListJson,
  historyToJson,
  ListJson,
  NodeJson,
  WriteJson,
  writeToJson,
} from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import { ServerError } from "../errors.js";
import { type Condition, etagOf, nodeEtag, parseCondition } from "../http-headers.js";
import { keyFromUrl, keyToUrlPath } from "../key-path.js";
import { LIST_BYTES, LIST_CHUNK, listedChild, listPage } from "../listing.js";
import type { RouteDoc } from "../openapi.js";
import { keyRoutes, PutBody, TreeQuery } from "../schemas.js";
import { listSubtree } from "../subtree.js";
import { nodeBody, setFromBody, valueFromBody } from "../wire.js";

export const TREE_PREFIX = "/v1/tree";
const MAX_DEPTH_LEVELS = 64;

const errors = {
  400: ErrorJson,
  401: ErrorJson,
  404: ErrorJson,
  409: ErrorJson,
  412: ErrorJson,
  413: ErrorJson,
};

const node = {
  key: "/notes/today",
  kind: "char/utf8",
  value: "hello world",
  version: 3,
  createRev: 12,
  modRev: 40,
  mtime: 1764835200000,
  ro: false,
} satisfies NodeJson;
const written = { key: "/notes/today", rev: 41, version: 4 } satisfies WriteJson;
const mismatch = {
  error: {
    code: "TREE_VERSION_MISMATCH",
    message:
      "version mismatch on /notes/today: expected 2, found 3 (it was changed); read it again and retry",
    key: "/notes/today",
    expected: 2,
    actual: 3,
    current: node,
  },
};
const ifMatch =
  'the version the key must be at ("3", or a directory\'s whole ETag "3.5"; * : it must exist): otherwise 412 TREE_VERSION_MISMATCH with the current node';

/** What the document says of each method beyond the schemas (server/openapi.ts). */
const docs = {
  get: {
    headers: { "If-None-Match": "an ETag a GET answered (or *): 304 Not Modified while it still holds" },
    responses: {
      200: {
        headers: { ETag: "on a node (a value, or a directory with ?node=1), not on a listing or history" },
        examples: {
          value: node,
          listing: {
            key: "/notes/",
            children: [
              { ...node, name: "today" },
              {
                key: "/notes/old/",
                name: "old/",
                kind: "index",
                count: 2,
                version: 1,
                createRev: 5,
                modRev: 5,
                mtime: 1764830000000,
                ro: false,
              },
            ],
            next: "old/",
          },
          history: {
            key: "/notes/today",
            history: [{ kind: "char/utf8", value: "hello", version: 2, modRev: 30, mtime: 1764835100000 }],
          },
        },
      },
      304: { headers: { ETag: true } },
      404: {
        examples: {
          absent: {
            error: { code: "TREE_NOT_FOUND", message: "no such key /notes/today", key: "/notes/today" },
          },
        },
      },
    },
  },
  put: {
    headers: { "If-Match": ifMatch, "If-None-Match": "* : create only (412 when the key exists)" },
    body: {
      inferred: "hello world",
      typed: { kind: "int64", value: "9007199254740993", ro: true },
      json: { kind: "json", value: { tags: ["a", "b"] } },
    },
    responses: {
      200: { headers: { ETag: "on a value (not when a directory is created)" }, examples: { written } },
      412: { examples: { mismatch } },
    },
  },
  post: {
    body: { inferred: "buy milk" },
    responses: {
      201: {
        headers: { Location: true, ETag: true },
        examples: { appended: { key: "/todo/7", rev: 42, version: 1 } },
      },
      405: { headers: { Allow: true } },
    },
  },
  delete: {
    headers: { "If-Match": ifMatch },
    responses: {
      200: {
        examples: {
          value: { key: "/notes/today", rev: 43, version: 0, deleted: true },
          directory: { key: "/notes/", rev: 44, version: 0, removed: 5 },
        },
      },
      412: { examples: { mismatch } },
    },
  },
} satisfies Record<string, RouteDoc>;

export interface TreeRoutesOptions {
  tree: Tree;
}

export const treeRoutes: FastifyPluginAsyncZod<TreeRoutesOptions> = async function treeRoutes(app, { tree }) {
  for (const { url, hide, params } of keyRoutes(TREE_PREFIX)) {
    app.get(
      url,
      {
        schema: {
          hide,
          summary: "Read a value, or list a directory (key ending in '/')",
          params,
          querystring: TreeQuery,
          doc: docs.get,
          response: {
            200: NodeJson.or(ListJson).or(HistoryListJson),
            304: z.null().describe("not modified: If-None-Match holds the current ETag"),
            ...errors,
          },
        },
      },
      async function getKey(req, reply) {
        const key = keyFromUrl(req.url, TREE_PREFIX);
        const q = req.query;
        if (key.endsWith("/") && !q.node) {
          const depth = q.recursive ? MAX_DEPTH_LEVELS : (q.depth ?? 1);
          const limit = q.limit ?? 1000;
          // Bounded answers (server/listing.ts): large values as previews, at most LIST_BYTES a page.
          if (depth === 1) {
            const page = await listPage(tree, key, {
              limit,
              ...(q.after === undefined ? {} : { after: q.after }),
              ...(q.values === false ? { values: false } : {}),
              ...(q.system ? { system: true } : {}),
            });
            const out: ListJson = { key: page.key, children: page.children };
            if (page.next !== undefined) out.next = page.next;
            return out;
          }
          const page = await listSubtree(
            tree,
            key,
            {
              depth,
              limit,
              maxWeight: LIST_BYTES,
              chunk: LIST_CHUNK,
              ...(q.after === undefined ? {} : { after: q.after }),
              ...(q.values === false ? { values: false } : {}),
              ...(q.system ? { system: true } : {}),
            },
            (e) => {
              const { json, weight } = listedChild(e.child, e.name);
              return { item: json, weight };
            },
          );
          const out: ListJson = { key, children: page.entries };
          if (page.next !== undefined) out.next = page.next;
          return out;
        }
        if (q.history) {
          const history = await tree.history(key);
          if (history.length === 0 && (await tree.get(key)) === undefined) throw notFound(key);
          return { key, history: history.map(historyToJson) };
        }
        const node = await tree.get(key, q.consistency ? { consistency: q.consistency } : undefined);
        if (!node) throw notFound(key);
        const etag = nodeEtag(node);
        reply.header("etag", etag);
        const inm = req.headers["if-none-match"];
        if (inm !== undefined && (inm.trim() === "*" || inm.split(",").some((t) => t.trim() === etag))) {
          // No payload at all: `null` (what the 304 schema documents) would be serialized to "null"
          // with a Content-Length, which a 304 cannot carry; strict clients refuse the mismatch.
          return reply.code(304).send(undefined as unknown as null);
        }
        reply.type("application/json; charset=utf-8");
        return nodeBody(node) as unknown as NodeJson;
      },
    );

    app.put(
      url,
      {
        schema: {
          hide,
          summary:
            "Write a value (If-Match: version → compare-and-set; If-None-Match: * → create only); a key ending in '/' creates a directory",
          params,
          querystring: TreeQuery,
          body: PutBody,
          doc: docs.put,
          response: { 200: WriteJson, ...errors },
        },
      },
      async function putKey(req, reply) {
        const key = keyFromUrl(req.url, TREE_PREFIX);
        if (key.endsWith("/")) {
          if (hasBody(req))
            throw new TreeError(
              "TREE_INVALID_VALUE",
              `${key} names a directory, which holds no value: PUT it without a body to create it, or drop the trailing '/'`,
              { key },
            );
          return writeToJson(await tree.mkindex(key));
        }
        const { value, options } = setFromBody(hasBody(req) ? req.body : undefined);
        if (req.query.force) options.force = true;
        if (req.query.unchecked) options.unchecked = true;
        const ifMatch = parseCondition("If-Match", req.headers["if-match"]);
        const ifNoneMatch = parseCondition("If-None-Match", req.headers["if-none-match"]);
        if (ifNoneMatch === "*") options.create = true;
        else if (ifNoneMatch !== undefined)
          throw new ServerError(
            "HTTP_INVALID_HEADER",
            "a PUT takes If-None-Match: * (create only), not a version",
            {
              header: "If-None-Match",
            },
          );
        if (ifMatch !== undefined) options.ifVersion = await expectedVersion(tree, key, ifMatch);
        const res = await tree.set(key, value, options);
        reply.header("etag", etagOf(res.version));
        return writeToJson(res);
      },
    );

    app.post(
      url,
      {
        schema: {
          hide,
          summary: "Append: create the next dense child <n> of a directory; 201 with its Location",
          params,
          body: PutBody,
          doc: docs.post,
          response: { 201: WriteJson, 405: ErrorJson, ...errors },
        },
      },
      async function appendKey(req, reply) {
        const key = keyFromUrl(req.url, TREE_PREFIX);
        if (!key.endsWith("/")) {
          reply.header("allow", "GET, PUT, DELETE");
          throw new ServerError(
            "HTTP_METHOD_NOT_ALLOWED",
            `POST appends to a directory: ${key} names a value; end the key with '/'`,
            { key },
          );
        }
        const { value, ro, vid } = valueFromBody(hasBody(req) ? req.body : undefined);
        const res = await tree.append(key, value, {
          ...(ro === undefined ? {} : { ro }),
          ...(vid === undefined ? {} : { vid }),
        });
        reply
          .code(201)
          .header("location", keyToUrlPath(res.key, TREE_PREFIX))
          .header("etag", etagOf(res.version));
        return writeToJson(res);
      },
    );

    app.delete(
      url,
      {
        schema: {
          hide,
          summary:
            "Delete a value, or a directory and everything under it (key ending in '/'); If-Match: version",
          params,
          querystring: TreeQuery,
          doc: docs.delete,
          response: { 200: DeleteJson, ...errors },
        },
      },
      async function deleteKey(req) {
        const key = keyFromUrl(req.url, TREE_PREFIX);
        const ifMatch = parseCondition("If-Match", req.headers["if-match"]);
        const o: { force?: boolean; ifVersion?: number } = {};
        if (req.query.force) o.force = true;
        if (ifMatch !== undefined) o.ifVersion = await expectedVersion(tree, key, ifMatch);
        if (key.endsWith("/") && !req.query.empty) {
          const res = await tree.deltree(key, o);
          return { ...writeToJson(res), removed: res.removed };
        }
        const res = await tree.del(key, o);
        return { ...writeToJson(res), deleted: res.deleted };
      },
    );
  }
};

/**
 * The version a write must find. `If-Match: *` asks that the key exist: its current version becomes
 * the compare. A directory's full ETag (`"3.5"`) must match its count too; the tree then guards
 * the version atomically (a child added in between is not caught: the count is advisory).
 */
async function expectedVersion(
  tree: Tree,
  key: string,
  cond: Exclude<Condition, undefined>,
): Promise<number> {
  if (cond !== "*" && cond.count === undefined) return cond.version;
  const node = await tree.get(key);
  const count = node?.kind === "index" ? node.count : undefined;
  if (!node || (cond !== "*" && (node.version !== cond.version || count !== cond.count)))
    throw new TreeError(
      "TREE_VERSION_MISMATCH",
      node
        ? `${key} has changed: its ETag is now ${nodeEtag(node)}, not ${JSON.stringify(cond === "*" ? "*" : `${cond.version}.${cond.count}`)}`
        : `${key} does not exist (If-Match: ${cond === "*" ? "*" : cond.version})`,
      {
        key,
        expected: cond === "*" ? "*" : cond.version,
        actual: node?.version ?? 0,
        ...(node ? { current: node } : {}),
      },
    );
  return node.version;
}

/** Did the request carry a body at all? (Without one fastify leaves `body` null.) */
function hasBody(req: FastifyRequest): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** The 404 of a key that is not there (the fast path answers it too). */
export function notFound(key: string): TreeError {
  return new TreeError("TREE_NOT_FOUND", `no such key ${key}`, { key });
}
