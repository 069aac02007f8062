/**
 * `GET /v1/mcp`: the upstream MCP servers registered at `/byteseek/mcp/<server>`, each with its
 * state in this server, its synced tools and its last sync; `POST /v1/mcp/sync {"server"?}`: syncs
 * one server (or all) now and answers what changed, as `kvspace mcp list|sync` print them.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { McpClient } from "../../tools/mcp/client.js";
import type { RouteDoc } from "../openapi.js";
import { McpServersJson, McpSyncJson } from "../runtime-schemas.js";
import { ErrorJson } from "../schemas.js";

export interface McpServerRoutesOptions {
  mcp: Pick<McpClient, "list" | "sync">;
}

/** What the document says beyond the schemas (server/openapi.ts). */
const listDoc = {
  responses: {
    200: {
      examples: {
        servers: {
          servers: [
            {
              server: "files",
              transport: "stdio",
              target: "mcp-server-filesystem /srv/docs",
              enabled: true,
              state: "running",
              pid: 4242,
              tools: 2,
              toolNames: ["files.read_file", "files.list_directory"],
              sync: { state: "ok", reason: "start", ts: 1764835200000 },
            },
          ],
        },
      },
    },
  },
} satisfies RouteDoc;
const syncDoc = {
  body: { one: { server: "files" }, all: {} },
  responses: {
    200: {
      examples: {
        synced: {
          reports: [
            {
              server: "files",
              ok: true,
              tools: 2,
              added: ["files.list_directory"],
              changed: [],
              removed: [],
              conflicts: [],
            },
          ],
        },
      },
    },
  },
} satisfies RouteDoc;

export const mcpServerRoutes: FastifyPluginAsyncZod<McpServerRoutesOptions> = async function mcpServerRoutes(
  app,
  { mcp },
) {
  app.get(
    "/v1/mcp",
    {
      schema: {
        summary: "The registered upstream MCP servers, their state and tools",
        doc: listDoc,
        response: { 200: McpServersJson, 401: ErrorJson },
      },
    },
    async function listServers() {
      return { servers: await mcp.list() };
    },
  );

  app.post(
    "/v1/mcp/sync",
    {
      schema: {
        summary: "Sync one upstream MCP server's tools (or every server's) into declarations now",
        doc: syncDoc,
        body: z
          .object({ server: z.string().optional().describe("the server; absent: every registered one") })
          .strict()
          .default({}),
        response: { 200: McpSyncJson, 400: ErrorJson, 401: ErrorJson },
      },
    },
    async function syncServers(request) {
      return { reports: await mcp.sync(request.body.server, "manual") };
    },
  );
};
