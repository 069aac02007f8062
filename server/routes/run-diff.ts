/**
 * `GET /v1/agent/runs/<a>/diff/<b>`: where two runs part — the first step at which what the model
 * was asked, its answer, a tool call or a call's result differ — and a short diff of it, read from
 * the tree (agent/replay/diff.ts; `kvspace runs diff` prints the same). 200 either way (`identical`
 * says which); 404 when a run has no messages.
 */

import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { diffRunsIn } from "../../agent/replay/diff.js";
import { keys } from "../../shared/keys.js";
import { RUN_ID } from "../../tools/run-id.js";
import { ErrorJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import type { RouteDoc } from "../openapi.js";
import { RunDiffJson } from "../runtime-schemas.js";

export interface RunDiffRoutesOptions {
  tree: Tree;
}

const Params = z.object({
  a: z.string().regex(RUN_ID, "a vid is letters, digits and _ . : @ -").describe("the first run"),
  b: z.string().regex(RUN_ID, "a vid is letters, digits and _ . : @ -").describe("the run compared with it"),
});

const doc = {
  responses: {
    200: {
      examples: {
        diverged: {
          a: "r1",
          b: "r2",
          identical: false,
          steps: { a: 3, b: 3 },
          calls: { a: 2, b: 2 },
          divergence: {
            kind: "result",
            step: 2,
            turn: 1,
            turnStep: 2,
            call: 1,
            tool: "edit.read",
            records: { a: keys.toolRecord("r1", 1), b: keys.toolRecord("r2", 1) },
            summary: "edit.read answered otherwise",
            diff: ["--- r1", "+++ r2", "@@ -1,1 +1,1 @@", "-x = 1", "+x = 2"],
          },
        },
        same: { a: "r1", b: "r3", identical: true, steps: { a: 3, b: 3 }, calls: { a: 2, b: 2 } },
      },
    },
  },
} satisfies RouteDoc;

export const runDiffRoutes: FastifyPluginAsyncZod<RunDiffRoutesOptions> = async function runDiffRoutes(
  app,
  { tree },
) {
  app.get(
    "/v1/agent/runs/:a/diff/:b",
    {
      schema: {
        summary: "Where two runs diverge first (prompt, answer, tool call or result), with a short diff",
        params: Params,
        doc,
        response: { 200: RunDiffJson, 400: ErrorJson, 401: ErrorJson, 404: ErrorJson },
      },
    },
    async function diff(req): Promise<RunDiffJson> {
      return diffRunsIn(tree, req.params.a, req.params.b);
    },
  );
};
