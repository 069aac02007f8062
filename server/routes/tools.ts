/**
 * `GET /v1/tools` (the catalogue as a model sees it, and the invalid declarations with their
 * problems) and `POST /v1/tools/:name/call` (one call through the runtime's boundary). A call
 * answers 200 whatever its kind — the kind says how it went; 4xx only for a malformed request.
 */

import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { keys } from "../../shared/keys.js";
import { acceptAgentTool } from "../../tools/catalogue/agent-tools.js";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import type { RecentCalls } from "../../tools/records/recent-calls.js";
import { RUN_ID } from "../../tools/run-id.js";
import type { Runtime, ToolCatalogue, ValidTool } from "../../tools/runtime.js";
import { createToolSearcher, type ToolSearcher } from "../../tools/search/searcher.js";
import { ErrorJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import { requestVia } from "../auth.js";
import type { RouteDoc } from "../openapi.js";
import {
  AgentToolAcceptJson,
  ToolCallsJson,
  type ToolJson,
  ToolResultJson,
  ToolsJson,
} from "../runtime-schemas.js";

export interface ToolsRoutesOptions {
  tree: Tree;
  runtime: Runtime;
  /** The catalogue's search; without it the routes make one over `runtime` on first use. */
  search?: ToolSearcher;
  /** The index of the call records (made at first use, then following the tree; the app's, shared with the overview). */
  records: () => RecentCalls;
}

export const ToolsQuery = z
  .object({
    name: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("only this tool (a tool's page reads its entry without the whole catalogue)"),
    search: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe("ranked search of the catalogue by what a tool does (name, description, parameters…)"),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(10)
      .describe("with search: at most this many hits"),
    vid: z
      .string()
      .regex(RUN_ID, "a vid is letters, digits and _.:@- (at most 128)")
      .optional()
      .describe("with search: only the tools this run is offered (default: the default grant's)"),
  })
  .strict();

export const ToolCallParams = z.object({ name: z.string().describe("the tool's name, e.g. tree.get") });

export const ToolCallBody = z
  .object({
    args: z.unknown().optional().describe("the arguments, checked against the tool's params (default {})"),
    vid: z
      .string()
      .regex(RUN_ID, "a vid is letters, digits and _.:@- (at most 128)")
      .optional()
      .describe("the run the call belongs to: its record lands at /byteseek/tool/<vid>/<n> (default http)"),
    approve: z.boolean().optional().describe("the user approved this call (tools that need confirmation)"),
  })
  .strict();
export type ToolCallBody = z.infer<typeof ToolCallBody>;

/** What the document says beyond the schemas (server/openapi.ts). */
const listDoc = {
  responses: {
    200: {
      examples: {
        catalogue: {
          tools: [
            {
              name: "tree.get",
              key: keys.tool("tree.get"),
              description: "Read a value, or list a directory (a key ending in '/').",
              snippet: "tree.get: read a key",
              guidelines: [],
              params: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
              enabled: true,
              sequential: false,
              confirm: false,
              impl: "builtin",
              ref: "tree.get",
            },
          ],
          invalid: [{ name: "bad.tool", key: keys.tool("bad.tool"), problems: ["description: required"] }],
        },
      },
    },
  },
} satisfies RouteDoc;
const callDoc = {
  body: { call: { args: { key: "/notes/today" }, vid: "r1" } },
  responses: {
    200: {
      examples: {
        ok: {
          kind: "ok",
          isError: false,
          text: "hello world",
          details: {},
          record: keys.toolRecord("r1", 1),
        },
        "bad arguments": {
          kind: "arg",
          isError: true,
          text: "tree.get: key: required; call it again with the arguments its schema asks for",
          details: {},
          record: keys.toolRecord("r1", 2),
        },
      },
    },
  },
} satisfies RouteDoc;

const acceptDoc = {
  body: { reviewed: { hash: "9f2c41ab7d0e5c3b8a1f6e2d4c9b0a7e5f3d1c8b6a4e2f0d9c7b5a3e1f8d6c4b" } },
  responses: {
    200: { examples: { accepted: { name: "text.wc", owner: "r1", hash: "9f2c41ab…" } } },
  },
} satisfies RouteDoc;

const callsDoc = {
  responses: {
    200: {
      examples: {
        "recent calls": {
          name: "text.wc",
          calls: [
            {
              key: keys.toolRecord("r1", 4),
              vid: "r1",
              n: 4,
              kind: "ok",
              isError: false,
              state: "done",
              ts: 1764950400000,
              ms: 12,
              text: "42 notes.md",
            },
            {
              key: keys.toolRecord("r1", 2),
              vid: "r1",
              n: 2,
              kind: "denied",
              isError: true,
              state: "done",
              ts: 1764950390000,
              ms: 0,
              text: "text.wc needs a person's approval…",
            },
          ],
          complete: true,
        },
      },
    },
  },
} satisfies RouteDoc;

/** The vid of calls that name none. */
export const HTTP_VID = "http";

export function toolToJson(t: ValidTool): ToolJson {
  const d = t.declaration;
  return {
    name: t.name,
    ...(d.title === undefined ? {} : { title: d.title }),
    key: t.key,
    description: d.description,
    ...(d.snippet === undefined ? {} : { snippet: d.snippet }),
    guidelines: d.guidelines,
    params: d.params as Record<string, unknown>,
    enabled: d.enabled,
    sequential: d.sequential,
    confirm: d.confirm,
    impl: d.impl.kind,
    ...(d.impl.kind === "builtin" ? { ref: d.impl.ref } : {}),
    ...(d.annotations === undefined ? {} : { annotations: d.annotations }),
    ...(t.owner === undefined ? {} : { owner: t.owner }),
    ...(t.hash === undefined ? {} : { hash: t.hash, accepted: t.accepted === true }),
    ...(t.blocked === undefined ? {} : { blocked: t.blocked }),
    ...(d.impl.kind === "mcp" ? { server: d.impl.server, upstream: d.impl.tool } : {}),
    ...(t.held ? { held: true } : {}),
    ...(t.approval === undefined ? {} : { approval: t.approval }),
  };
}

/** The catalogue as `GET /v1/tools` answers it. */
export function catalogueToJson(catalogue: ToolCatalogue): ToolsJson {
  const { valid, invalid, policyProblems } = catalogue;
  return {
    tools: valid.map(toolToJson),
    invalid,
    ...(policyProblems ? { policy: { key: POLICY_KEY, problems: policyProblems } } : {}),
  };
}

export const toolsRoutes: FastifyPluginAsyncZod<ToolsRoutesOptions> = async function toolsRoutes(
  app,
  { tree, runtime, search, records },
) {
  let own: ToolSearcher | undefined;
  const searcher = (): ToolSearcher => {
    if (search) return search;
    own ??= createToolSearcher({ tree, listTools: (vid) => runtime.listTools(vid) });
    return own;
  };
  app.addHook("onClose", async () => {
    own?.close();
  });

  app.get(
    "/v1/tools",
    {
      schema: {
        summary:
          "The tool catalogue: valid declarations as a model sees them, invalid ones with their problems; with ?search=, the tools that match, best first",
        querystring: ToolsQuery,
        doc: listDoc,
        response: { 200: ToolsJson, 400: ErrorJson, 401: ErrorJson },
      },
    },
    async function listTools(req) {
      const { search: query, limit, vid, name } = req.query;
      const catalogue = await runtime.listTools(vid);
      if (name !== undefined)
        return catalogueToJson({
          ...catalogue,
          valid: catalogue.valid.filter((t) => t.name === name),
          invalid: catalogue.invalid.filter((t) => t.name === name),
        });
      if (query === undefined) return catalogueToJson(catalogue);
      const hits = await searcher().search(query, { vid: vid ?? HTTP_VID, limit });
      const byName = new Map(catalogue.valid.map((t) => [t.name, t]));
      const tools = hits.map((h) => byName.get(h.name)).filter((t): t is ValidTool => t !== undefined);
      return { tools: tools.map(toolToJson), invalid: [], search: { query, hits } };
    },
  );

  app.get(
    "/v1/tools/:name/calls",
    {
      schema: {
        summary:
          "A tool's most recent calls across every run, newest first: outcome, time and the record of each",
        params: ToolCallParams,
        querystring: z
          .object({
            limit: z.coerce.number().int().min(1).max(20).default(20).describe("at most this many calls"),
          })
          .strict(),
        doc: callsDoc,
        response: { 200: ToolCallsJson, 400: ErrorJson, 401: ErrorJson },
      },
    },
    async function toolCalls(req) {
      const { calls, complete } = await records().of(req.params.name, req.query.limit);
      return { name: req.params.name, calls, complete };
    },
  );

  app.post(
    "/v1/tools/:name/accept",
    {
      schema: {
        summary:
          "A person accepts a tool a run declared, as it is now: other runs are offered it (policy agentTools.share: accepted)",
        params: ToolCallParams,
        body: z
          .object({
            hash: z
              .string()
              .regex(/^[0-9a-f]{64}$/)
              .optional()
              .describe(
                "the version reviewed (GET /v1/tools: hash): refused (409) if the tool changed since",
              ),
          })
          .strict()
          .default({}),
        doc: acceptDoc,
        response: {
          200: AgentToolAcceptJson,
          400: ErrorJson,
          401: ErrorJson,
          404: ErrorJson,
          409: ErrorJson,
        },
      },
    },
    async function acceptTool(req) {
      const { hash } = req.body;
      return acceptAgentTool(tree, req.params.name, { by: "person (http)", ...(hash ? { hash } : {}) });
    },
  );

  app.post(
    "/v1/tools/:name/call",
    {
      schema: {
        summary:
          "Call a tool through the boundary (resolve, validate, gate, execute, record); 200 whatever the kind",
        params: ToolCallParams,
        body: ToolCallBody,
        doc: callDoc,
        response: { 200: ToolResultJson, 400: ErrorJson, 401: ErrorJson, 413: ErrorJson, 415: ErrorJson },
      },
    },
    async function callTool(req, reply) {
      // A client that goes away stops its call.
      const ac = new AbortController();
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) ac.abort();
      });
      // (The body parser refused an integer a double cannot hold exactly: server/app.ts.)
      const { args = {}, vid = HTTP_VID, approve } = req.body;
      return runtime.call(req.params.name, args, {
        vid,
        signal: ac.signal,
        ...(approve === undefined ? {} : { approve }),
        // an approval the call needs is kept, naming the credential that let the request in
        ...(approve ? { approvedBy: "person (http)", approvedVia: requestVia(req) } : {}),
      });
    },
  );
};
