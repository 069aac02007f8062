/**
 * The OpenAPI document (`GET /openapi.json`, OpenAPI 3.1: its schemas are JSON Schema 2020-12).
 * @fastify/swagger builds it from the routes' zod schemas; what those cannot say each route declares
 * beside them, in its schema's `doc` (a `RouteDoc`): the headers it reads and sends, the media type
 * of an event stream or NDJSON, examples. This module turns that into the document, names the
 * wildcard path parameter, and applies the bearer scheme exactly where the token check applies.
 */
import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import { z } from "zod";
import { ErrorJson } from "../tree/http/index.js";
import { OPEN_PATHS } from "./auth.js";

declare module "fastify" {
  interface FastifySchema {
    /** What the OpenAPI document says of the route beyond its zod schemas (server/openapi.ts). */
    doc?: RouteDoc;
  }
}

/** Request headers a route may read, with what each does (a route says what it does there). */
export const REQUEST_HEADERS = ["If-Match", "If-None-Match", "Last-Event-ID", "Accept"] as const;
export type RequestHeaderName = (typeof REQUEST_HEADERS)[number];

interface HeaderSpec {
  description: string;
  schema: Record<string, unknown>;
}

const DECIMAL = { type: "string", pattern: "^[0-9]+$" };

/** Response headers the document names, each with its schema and meaning. */
export const RESPONSE_HEADERS = {
  ETag: {
    description:
      'the node\'s version as a strong entity tag ("3"; a directory\'s adds its child count: "3.5"); send it back in If-Match or If-None-Match',
    schema: { type: "string", pattern: '^"[0-9]+(\\.[0-9]+)?"$' },
  },
  Location: {
    description: "the URL path of the new child, each segment percent-encoded",
    schema: { type: "string", pattern: "^/v1/tree/" },
  },
  "Retry-After": { description: "seconds to wait before trying again", schema: DECIMAL },
  Allow: { description: "the methods this key answers", schema: { type: "string" } },
  "X-Byteseek-Revision": {
    description: "the tree's revision when the server answered (every answer carries it)",
    schema: DECIMAL,
  },
  "X-Byteseek-Compacted-Revision": {
    description: "the oldest revision a watch can resume after (every answer carries it)",
    schema: DECIMAL,
  },
  "X-Byteseek-Progress-Ms": {
    description:
      "the interval between a watch's progress events (its heartbeat), ms: a stream silent much longer than that has stalled, and a client reconnects with Last-Event-ID",
    schema: DECIMAL,
  },
  "X-Request-Id": {
    description:
      "the request's id as logged: the X-Request-Id the client sent (letters, digits, ._:-, at most 64), or one the server made",
    schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,64}$" },
  },
} as const satisfies Record<string, HeaderSpec>;
export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** The headers on every answer, whatever the route and status (server/answer.ts). */
export const EVERY_ANSWER: readonly ResponseHeaderName[] = [
  "X-Byteseek-Revision",
  "X-Byteseek-Compacted-Revision",
  "X-Request-Id",
];

/** Named examples, each a value of the schema it illustrates (an event stream's: its text). */
export type Examples = Record<string, unknown>;

export interface ResponseDoc {
  /** Headers this status sends beyond every answer's: `true` always, or the text saying when. */
  headers?: Partial<Record<ResponseHeaderName, true | string>>;
  /** What the status means here, when more than the usual. */
  description?: string;
  /** The media type of the status's schema, when not application/json. */
  media?: string;
  /** An event stream's events by name, each with its data's schema (the media's `x-events`). */
  events?: Record<string, z.ZodType>;
  /** Another media type the status may answer in, with its own schema. */
  alternative?: { media: string; schema: z.ZodType; when: string; examples?: Examples };
  examples?: Examples;
}

/** What a route's OpenAPI operation says beyond its zod schemas; declared in the route's schema. */
export interface RouteDoc {
  /** The name the wildcard path parameter (`*`) takes in the document (default `key`). */
  wildcard?: string;
  /** The request headers the route reads, each with what it does there. */
  headers?: Partial<Record<RequestHeaderName, string>>;
  /** Example request bodies, in the body's media type. */
  body?: Examples;
  /** Per status. */
  responses?: Record<number, ResponseDoc>;
}

/** A zod schema as the document's JSON Schema (2020-12, what the route schemas become). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "output",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return rest;
}

const ERROR_SCHEMA = jsonSchemaOf(ErrorJson);
const ERROR_TEXT = JSON.stringify(ERROR_SCHEMA);
/** Where the document keeps what every operation shares: the error shape, every answer's headers. */
export const ERROR_REF = "#/components/schemas/Error";
export const headerRef = (name: ResponseHeaderName): string => `#/components/headers/${name}`;
const DOC_KEY = "x-byteseek-doc";

/** What a status means when the route says nothing more. */
const STATUS_TEXT: Record<string, string> = {
  "200": "OK",
  "201": "created",
  "304": "not modified",
  "400": "the request is malformed (key, query, header or body): the message says what to fix",
  "401": "no token, or not the server's",
  "404": "no such key, directory or entry",
  "405": "the method does not apply to this key",
  "409": "the tree refuses the change as it stands (read-only, not empty, not a directory)",
  "410": "the revision asked for is compacted",
  "412": "a condition (If-Match, If-None-Match: *) does not hold: the error carries the current node",
  "413": "the body or value is over the limit",
  "415": "the body's Content-Type is not one the route reads",
  "502": "the model provider answered badly",
  "503": "not available now (retry later, or the model is not configured)",
  "504": "the model provider did not answer in time",
};

type JsonObject = Record<string, unknown>;
interface Operation {
  parameters?: JsonObject[];
  requestBody?: { content?: Record<string, JsonObject> };
  responses?: Record<
    string,
    { description?: string; headers?: JsonObject; content?: Record<string, JsonObject> }
  >;
  security?: unknown[];
  [DOC_KEY]?: RouteDoc & { open: boolean };
}

/** The @fastify/swagger options: the document's frame, and the two steps that complete it. */
export function openApiOptions(o: { token: boolean }): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "byteseek",
        version: "1",
        description:
          "A hierarchical key-value tree over HTTP, with a tool runtime and an agent. Keys go in the path, each segment percent-encoded (UTF-8); a key ending in '/' is a directory. Every answer carries X-Byteseek-Revision, X-Byteseek-Compacted-Revision and X-Request-Id; errors are {error: {code, message, ...}}. A request whose Host is not this server's answers 421, one from another site's Origin 403.",
      },
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            description: o.token
              ? "this server has a token (BYTESEEK_TOKEN): send Authorization: Bearer <token> on every route that lists this scheme"
              : "used when the server is started with BYTESEEK_TOKEN; this one has none, so no route needs it",
          },
        },
      },
      ...(o.token ? { security: [{ bearer: [] }] } : {}),
    },
    transform: documentRoute,
    transformObject: (d) =>
      completeDocument(("openapiObject" in d ? d.openapiObject : {}) as JsonObject, o.token),
  };
}

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

/** One route: zod schemas to JSON Schema, the wildcard named, its `doc` carried to the operation. */
function documentRoute(input: TransformInput): { schema: JsonObject; url: string } {
  const out = jsonSchemaTransform(input) as { schema: JsonObject; url: string };
  const schema = { ...out.schema };
  if (schema.hide) return out;
  const doc = (schema.doc ?? {}) as RouteDoc;
  delete schema.doc;
  let url = out.url;
  if (url.endsWith("/*")) {
    const name = doc.wildcard ?? "key";
    url = `${url.slice(0, -1)}:${name}`;
    const params = schema.params as { properties?: JsonObject; required?: string[] } | undefined;
    if (params?.properties?.["*"]) {
      const { "*": wild, ...others } = params.properties;
      schema.params = {
        ...params,
        properties: { ...others, [name]: wild },
        required: (params.required ?? []).map((r) => (r === "*" ? name : r)),
      };
    }
  }
  const config = (input.route as { config?: { public?: boolean } }).config;
  const open = OPEN_PATHS.has(input.url) || config?.public === true;
  schema[DOC_KEY] = { ...doc, open };
  return { schema, url };
}

const headerObject = (name: ResponseHeaderName, when: true | string): JsonObject => {
  const spec: HeaderSpec = RESPONSE_HEADERS[name];
  return when === true
    ? { description: spec.description, required: true, schema: spec.schema }
    : { description: `${when}: ${spec.description}`, schema: spec.schema };
};

const examplesObject = (examples: Examples): JsonObject =>
  Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }]));

/** The document as @fastify/swagger built it, completed from each operation's route doc. */
function completeDocument(doc: JsonObject, token: boolean): JsonObject {
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const ops of Object.values(paths))
    for (const op of Object.values(ops)) {
      const d = op[DOC_KEY] ?? { open: false };
      delete op[DOC_KEY];
      const headerParams = Object.entries(d.headers ?? {}).map(([name, description]) => ({
        name,
        in: "header",
        description,
        schema: { type: "string" },
      }));
      if (headerParams.length > 0) op.parameters = [...(op.parameters ?? []), ...headerParams];
      if (d.body)
        for (const media of Object.values(op.requestBody?.content ?? {}))
          media.examples = examplesObject(d.body);
      op.responses ??= {};
      const responses = op.responses;
      // The token check (server/auth.ts) lets open routes through; every other route answers 401 without it.
      if (!token) delete responses["401"];
      else if (d.open) {
        op.security = [];
        delete responses["401"];
      } else
        responses["401"] ??= {
          description: "no token, or not the server's",
          content: { "application/json": { schema: { $ref: ERROR_REF } } },
        };
      for (const [status, r] of Object.entries(responses)) {
        const rd = d.responses?.[Number(status)] ?? {};
        if (rd.media && r.content?.["application/json"]) {
          r.content = { [rd.media]: r.content["application/json"] };
        }
        const media = rd.media ?? "application/json";
        const content = r.content?.[media];
        if (content && rd.examples) content.examples = examplesObject(rd.examples);
        if (content && rd.events)
          content["x-events"] = Object.fromEntries(
            Object.entries(rd.events).map(([name, schema]) => [name, jsonSchemaOf(schema)]),
          );
        if (rd.alternative) {
          const alt = rd.alternative;
          r.description = `${r.description ?? ""}; ${alt.when}: ${alt.media}`;
          r.content = {
            ...r.content,
            [alt.media]: {
              schema: jsonSchemaOf(alt.schema),
              ...(alt.examples ? { examples: examplesObject(alt.examples) } : {}),
            },
          };
        }
        if (rd.description) r.description = rd.description;
        else if (r.description === undefined || /^(Default Response|an error)$/.test(r.description))
          r.description = STATUS_TEXT[status] ?? "see the body";
        for (const m of Object.values(r.content ?? {}))
          if (JSON.stringify(m.schema) === ERROR_TEXT) m.schema = { $ref: ERROR_REF };
        const headers: JsonObject = {};
        for (const name of EVERY_ANSWER) headers[name] = { $ref: headerRef(name) };
        for (const [name, when] of Object.entries(rd.headers ?? {}))
          headers[name] = headerObject(name as ResponseHeaderName, when);
        r.headers = headers;
      }
    }
  const components = (doc.components ?? {}) as JsonObject;
  doc.components = {
    ...components,
    schemas: { ...(components.schemas as JsonObject | undefined), Error: ERROR_SCHEMA },
    headers: Object.fromEntries(EVERY_ANSWER.map((name) => [name, headerObject(name, true)])),
  };
  return doc;
}
