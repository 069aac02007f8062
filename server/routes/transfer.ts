/** `GET /v1/export/<dir/>` streams NDJSON; `POST /v1/import` takes an NDJSON body, all or nothing. */
import { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { maskExportEntry } from "../../tools/mcp/secret-fields.js";
import { TreeError } from "../../tree/errors.js";
import { exactInt64, exactJson } from "../../tree/exact.js";
import { ErrorJson, ImportResultJson } from "../../tree/http/index.js";
import { parseDirKey } from "../../tree/path.js";
import type { ExportEntry, Tree } from "../../tree/types.js";
import { ServerError } from "../errors.js";
import { parseJsonBody } from "../exact-json.js";
import { keyFromUrl } from "../key-path.js";
import type { RouteDoc } from "../openapi.js";
import { ExportQuery, ImportQuery, keyRoutes, NdjsonStream } from "../schemas.js";

export const EXPORT_PREFIX = "/v1/export";

async function* maskedEntries(entries: AsyncIterable<ExportEntry>): AsyncGenerator<ExportEntry> {
  for await (const e of entries) yield maskExportEntry(e);
}
export const NDJSON_TYPES = [
  "application/x-ndjson",
  "application/ndjson",
  "application/jsonl",
  "application/json-seq",
];

const lines = [
  '{"key":"/notes/","kind":"index","version":1}',
  '{"key":"/notes/today","kind":"char/utf8","value":"hello world","version":3}',
  '{"key":"/notes/count","kind":"int64","value":42,"ro":true,"version":1}',
  "",
].join("\n");

/** What the document says beyond the schemas (server/openapi.ts). */
const exportDoc = {
  wildcard: "dir",
  responses: { 200: { media: "application/x-ndjson", examples: { lines } } },
} satisfies RouteDoc;
const importDoc = {
  body: { lines },
  responses: { 200: { examples: { imported: { imported: 3, rev: 57 } } } },
} satisfies RouteDoc;

export interface TransferRoutesOptions {
  tree: Tree;
  /** Largest import body, bytes. */
  bodyLimit: number;
}

export const transferRoutes: FastifyPluginAsyncZod<TransferRoutesOptions> = async function transferRoutes(
  app,
  { tree, bodyLimit },
) {
  for (const { url, hide, params } of keyRoutes(EXPORT_PREFIX)) {
    app.get(
      url,
      {
        schema: {
          hide,
          summary: "Export a directory and everything under it (system entries too) as NDJSON",
          params,
          querystring: ExportQuery,
          doc: exportDoc,
          response: { 200: NdjsonStream, 400: ErrorJson, 401: ErrorJson, 404: ErrorJson },
        },
      },
      async function exportDir(req, reply) {
        const dir = parseDirKey(keyFromUrl(req.url, EXPORT_PREFIX)).key;
        if ((await tree.get(dir)) === undefined)
          throw new TreeError("TREE_NOT_FOUND", `no directory ${dir}`, { key: dir });
        reply.type("application/x-ndjson; charset=utf-8");
        // a registry entry's secret fields leave masked unless the person asks for them (?secrets=1)
        const whole = req.query.secrets === true;
        const entries = whole ? tree.export(dir) : maskedEntries(tree.export(dir));
        const stream = Readable.from(ndjsonChunks(entries), { objectMode: false });
        // The 200 schema documents the NDJSON text; fastify sends the stream as it comes.
        return reply.send(stream as unknown as string);
      },
    );
  }

  // The body stays a stream: lines are read (and counted against the limit) as the import reads them.
  app.addContentTypeParser(NDJSON_TYPES, function keepStream(_req, payload, done) {
    done(null, payload);
  });

  app.post(
    "/v1/import",
    {
      schema: {
        summary: "Import NDJSON lines ({key, kind, value?, ro?, vid?}); all or nothing, errors name the line",
        consumes: NDJSON_TYPES,
        querystring: ImportQuery,
        body: NdjsonStream,
        doc: importDoc,
        response: {
          200: ImportResultJson,
          400: ErrorJson,
          401: ErrorJson,
          409: ErrorJson,
          413: ErrorJson,
          415: ErrorJson,
        },
      },
      // The zod string schema documents the body; the stream itself is not validated as a string.
      validatorCompiler: () => (data) => ({ value: data }),
    },
    async function importLines(req) {
      const body = req.body as unknown;
      if (!(body instanceof Readable))
        throw new ServerError("HTTP_UNSUPPORTED_MEDIA_TYPE", `send the lines as ${NDJSON_TYPES[0]}`);
      // the route's validatorCompiler passes everything through, the query too: read it here
      const query = ImportQuery.safeParse(req.query);
      if (!query.success)
        throw new ServerError("HTTP_BAD_REQUEST", "force and unchecked take 1 or 0 (true or false)");
      return tree.import(exactEntries(readLines(body, bodyLimit)), {
        ...(query.data.force ? { force: true } : {}),
        ...(query.data.unchecked ? { unchecked: true } : {}),
      });
    },
  );
};

/** Export entries as NDJSON text, grouped into chunks of about 64 KiB. */
async function* ndjsonChunks(entries: AsyncIterable<ExportEntry>): AsyncGenerator<string> {
  let buf = "";
  for await (const e of entries) {
    buf += `${JSON.stringify(e)}\n`;
    if (buf.length >= 65_536) {
      yield buf;
      buf = "";
    }
  }
  if (buf !== "") yield buf;
}

/**
 * The lines of a body, refusing it once it passes `limit` bytes — after reading the rest of it
 * (discarded; the body timeout bounds how long), so the client reads a 413 rather than a reset
 * connection. Nothing is imported: the tree reads every line before it writes one.
 */
async function* readLines(stream: Readable, limit: number): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let seen = 0;
  let rest = "";
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    seen += bytes.length;
    if (seen > limit) continue;
    rest += decoder.write(bytes);
    const lines = rest.split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) yield line;
  }
  if (seen > limit)
    throw new ServerError(
      "HTTP_BODY_TOO_LARGE",
      `the import body is ${seen} bytes, over the limit of ${limit} (BYTESEEK_BODY_LIMIT): nothing was imported; split the file, or raise the limit`,
      { limit, size: seen },
    );
  rest += decoder.end();
  if (rest !== "") yield rest;
}

/**
 * Each line read as the tree's other writes are (server/exact-json.ts, tree/exact.ts): an int64 beyond 2^53 kept
 * exactly, an integer json cannot hold or out of int64's range refused, naming the line.
 */
async function* exactEntries(lines: AsyncIterable<string>): AsyncGenerator<ExportEntry | string> {
  let line = 0;
  for await (const text of lines) {
    line++;
    if (text.trim() === "") {
      yield text;
      continue;
    }
    try {
      const e = parseJsonBody(text, JSON.parse) as Record<string, unknown> | null;
      if (e !== null && typeof e === "object" && !Array.isArray(e)) {
        exactValueOf(e);
        // The previous versions a line carries are values too.
        if (Array.isArray(e.history))
          for (const h of e.history)
            if (h !== null && typeof h === "object" && !Array.isArray(h)) exactValueOf(h);
      }
      yield e as unknown as ExportEntry;
    } catch (err) {
      throw new TreeError(
        "TREE_IMPORT_FAILED",
        `import failed at line ${line}: ${(err as Error).message}; nothing was imported`,
        { line },
      );
    }
  }
}

/** An entry's value read as the tree's other writes are: int64 exactly, float64 as a number. */
function exactValueOf(e: Record<string, unknown>): void {
  if (typeof e.value === "bigint")
    e.value = e.kind === "float64" ? Number(e.value) : exactInt64(e.value).toString();
  else e.value = exactJson(e.value);
}
