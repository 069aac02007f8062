/**
 * `GET /openapi.json` (built by @fastify/swagger from the routes' zod schemas and docs:
 * server/openapi.ts) and `GET /docs`, a page rendered from that same document: a table of
 * contents, then each operation with its parameters, headers, examples and (folded) schemas.
 *
 * Both need the server's credential, as every route but /healthz and the page's shell does; the web
 * page links to /docs, and a browser following the link sends the page's cookie. The page is
 * one self-contained HTML document: no script, no external resource, its one style block allowed
 * by hash in its Content-Security-Policy; every text it shows is escaped.
 */
import { createHash } from "node:crypto";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { ERROR_REF } from "../openapi.js";

interface Media {
  schema?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Header {
  description?: string;
  required?: boolean;
  /** A header every answer carries, described once (components.headers). */
  $ref?: string;
}
interface OpenApiOperation {
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Array<{
    name: string;
    in: string;
    description?: string;
    required?: boolean;
    schema?: unknown;
  }>;
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<
    string,
    { description?: string; headers?: Record<string, Header>; content?: Record<string, Media> }
  >;
}

export interface OpenApiDoc {
  openapi?: string;
  info?: { title?: string; version?: string; description?: string };
  security?: unknown[];
  components?: {
    securitySchemes?: Record<string, { description?: string }>;
    schemas?: Record<string, unknown>;
    headers?: Record<string, Header>;
  };
  paths?: Record<string, Record<string, OpenApiOperation>>;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e6e6e6;background:#161618}pre,code{background:#24242a!important}th,td,section{border-color:#3a3a40!important}a{color:#8ab4ff}}
pre{background:#f4f4f6;padding:.5rem;overflow:auto;font-size:12px;border-radius:4px}code{background:#f4f4f6;padding:0 .2em;border-radius:3px}
section{border-top:1px solid #ddd;margin-top:1.5rem}h2 code,h2{font-size:1.15rem}.m{font-weight:700;margin-right:.4em}
table{border-collapse:collapse;width:100%;font-size:14px}th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
nav ol{columns:2;column-gap:3rem;padding-left:2.2rem}nav li{break-inside:avoid}details summary{cursor:pointer;font-size:13px}.note{font-size:13px;opacity:.8}`;

/** The page's headers: nothing runs, nothing loads, nothing frames it; its own style only. */
export const DOCS_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": `default-src 'none'; style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-cache",
} as const;

export const docsRoutes: FastifyPluginAsyncZod = async function docsRoutes(app) {
  app.get(
    "/openapi.json",
    { schema: { hide: true, response: { 200: z.unknown() } } },
    async function openapi() {
      return app.swagger();
    },
  );
  let page: string | undefined;
  app.get("/docs", { schema: { hide: true } }, async function docs(_req, reply) {
    // The document is fixed once the routes are registered: render it once.
    page ??= renderDocs(app.swagger() as OpenApiDoc);
    reply.headers(DOCS_HEADERS);
    return page;
  });
};

/** Text made safe for HTML, in an element or in an attribute value. */
export const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** An operation's anchor: its method and path, reduced to characters an id may hold. */
export const anchorOf = (method: string, path: string): string =>
  `op-${method}-${path}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/-+$/, "");

const json = (v: unknown): string => esc(JSON.stringify(v, null, 2) ?? "");

/** An example as shown: a stream's text as it is, anything else as JSON. */
const exampleBlock = (name: string, value: unknown): string =>
  `<p class="note">Example: ${esc(name)}</p><pre>${typeof value === "string" && value.includes("\n") ? esc(value) : json(value)}</pre>`;

const isErrorShape = (schema: unknown): boolean => (schema as { $ref?: unknown })?.$ref === ERROR_REF;

function mediaBlock(type: string, media: Media): string {
  const parts = [
    `<p><code>${esc(type)}</code>${isErrorShape(media.schema) ? ': <a href="#errors">the error shape</a>' : ""}</p>`,
  ];
  for (const [name, ex] of Object.entries(media.examples ?? {})) parts.push(exampleBlock(name, ex.value));
  if (media.schema !== undefined && !isErrorShape(media.schema))
    parts.push(`<details><summary>schema</summary><pre>${json(media.schema)}</pre></details>`);
  return parts.join("");
}

function operationBlock(method: string, path: string, op: OpenApiOperation, secured: boolean): string {
  const parts = [
    `<section id="${anchorOf(method, path)}"><h2><span class="m">${esc(method.toUpperCase())}</span><code>${esc(path)}</code></h2>`,
  ];
  if (op.summary) parts.push(`<p>${esc(op.summary)}</p>`);
  if (op.description) parts.push(`<p>${esc(op.description)}</p>`);
  const needsToken = op.security ? op.security.length > 0 : secured;
  parts.push(
    `<p class="note">${needsToken ? "Needs <code>Authorization: Bearer &lt;token&gt;</code>." : "Open: no token needed."}</p>`,
  );
  const params = op.parameters ?? [];
  if (params.length > 0) {
    parts.push("<h3>Parameters</h3><table><tr><th>name</th><th>in</th><th>description</th></tr>");
    for (const p of params) {
      const values = (p.schema as { enum?: unknown[] } | undefined)?.enum;
      parts.push(
        `<tr><td><code>${esc(p.name)}</code>${p.required ? " (required)" : ""}</td><td>${esc(p.in)}</td><td>${esc(p.description ?? "")}${values ? ` <span class="note">(${esc(values.map((v) => (v === "" ? '""' : String(v))).join(" | "))})</span>` : ""}</td></tr>`,
      );
    }
    parts.push("</table>");
  }
  const body = Object.entries(op.requestBody?.content ?? {});
  if (body.length > 0) {
    parts.push("<h3>Request body</h3>");
    // Several media types (NDJSON's spellings) share one schema: show it once.
    const [first, ...rest] = body;
    parts.push(mediaBlock(first![0], first![1]));
    if (rest.length > 0)
      parts.push(`<p class="note">also as ${rest.map(([t]) => `<code>${esc(t)}</code>`).join(", ")}</p>`);
  }
  parts.push("<h3>Responses</h3>");
  for (const [status, r] of Object.entries(op.responses ?? {})) {
    parts.push(`<h4>${esc(status)}${r.description ? ` — ${esc(r.description)}` : ""}</h4>`);
    // Every answer's headers are listed once at the top; here only the route's own.
    const headers = Object.entries(r.headers ?? {}).filter(([, h]) => h.$ref === undefined);
    if (headers.length > 0) {
      parts.push("<table><tr><th>header</th><th>description</th></tr>");
      for (const [name, h] of headers)
        parts.push(
          `<tr><td><code>${esc(name)}</code>${h.required ? "" : " (when stated)"}</td><td>${esc(h.description ?? "")}</td></tr>`,
        );
      parts.push("</table>");
    }
    for (const [type, media] of Object.entries(r.content ?? {})) parts.push(mediaBlock(type, media));
  }
  parts.push("</section>");
  return parts.join("\n");
}

/** The docs page: a table of contents, then every operation. */
export function renderDocs(doc: OpenApiDoc): string {
  const secured = (doc.security ?? []).length > 0;
  const toc: string[] = [];
  const sections: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths ?? {}))
    for (const [method, op] of Object.entries(ops)) {
      toc.push(
        `<li><a href="#${anchorOf(method, path)}"><span class="m">${esc(method.toUpperCase())}</span><code>${esc(path)}</code></a>${op.summary ? ` — ${esc(op.summary)}` : ""}</li>`,
      );
      sections.push(operationBlock(method, path, op, secured));
    }
  const title = esc(doc.info?.title ?? "API");
  const scheme = doc.components?.securitySchemes?.bearer?.description;
  const common = Object.entries(doc.components?.headers ?? {})
    .map(([name, h]) => `<tr><td><code>${esc(name)}</code></td><td>${esc(h.description ?? "")}</td></tr>`)
    .join("");
  const errorSchema = doc.components?.schemas?.Error;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>${title} HTTP API</title><style>${STYLE}</style></head>
<body><header><h1>${title} HTTP API <span class="note">${esc(doc.info?.version ?? "")}</span></h1>
<p>${esc(doc.info?.description ?? "")}</p>
${scheme ? `<p>Authentication: ${esc(scheme)}.</p>` : ""}
<p>The machine-readable document: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${esc(doc.openapi ?? "")}). The web page: <a href="/">/</a>.</p></header>
${common ? `<h2>Every answer carries</h2><table><tr><th>header</th><th>description</th></tr>${common}</table>` : ""}
${errorSchema ? `<h2 id="errors">Errors</h2><p>Every error answers <code>{"error": {"code", "message", …}}</code> with its status; the code is stable, the message says what to do.</p><details><summary>schema</summary><pre>${json(errorSchema)}</pre></details>` : ""}
<nav aria-label="Routes"><h2>Routes</h2><ol>
${toc.join("\n")}
</ol></nav>
<main>
${sections.join("\n")}
</main></body></html>`;
}
