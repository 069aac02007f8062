/**
 * `GET /v1/prompt?vid=&input=`: exactly what the model would get on the next turn of `vid` — the
 * system text and the tool schemas — rebuilt from the tree as the agent loop does.
 */

import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { buildPrompt } from "../../prompts/build.js";
import { newVid, RUN_ID } from "../../tools/run-id.js";
import type { Runtime } from "../../tools/runtime.js";
import { ErrorJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import type { RouteDoc } from "../openapi.js";
import { PromptJson } from "../runtime-schemas.js";

export interface PromptRoutesOptions {
  tree: Tree;
  runtime: Runtime;
}

const PromptQuery = z.object({
  vid: z
    .string()
    .regex(RUN_ID, "a vid is letters, digits and _ . : @ -")
    .optional()
    .describe("The run whose next turn to show (its failed calls are listed); absent: a new run"),
  input: z.string().optional().describe("The user's input, for memory recall"),
});

/** What the document says beyond the schemas (server/openapi.ts). */
const doc = {
  responses: {
    200: {
      examples: {
        prompt: {
          vid: "r8",
          system: "You are byteseek's agent. …\n\nTools:\n- tree.get: read a key",
          tools: [
            {
              name: "tree.get",
              description: "Read a value, or list a directory (a key ending in '/').",
              parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
            },
          ],
          mode: "all",
          deferred: 0,
        },
      },
    },
  },
} satisfies RouteDoc;

export const promptRoutes: FastifyPluginAsyncZod<PromptRoutesOptions> = async function promptRoutes(
  app,
  { tree, runtime },
) {
  app.get(
    "/v1/prompt",
    {
      schema: {
        summary: "The system prompt and tool schemas the model would get next",
        querystring: PromptQuery,
        doc,
        response: { 200: PromptJson, 400: ErrorJson, 401: ErrorJson },
      },
    },
    async function prompt(req) {
      const vid = req.query.vid ?? newVid();
      const input = req.query.input;
      const built = await buildPrompt({ tree, runtime, vid, ...(input !== undefined ? { input } : {}) });
      return { vid, ...built };
    },
  );
};
