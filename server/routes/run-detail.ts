/**
 * One run: `GET /v1/agent/runs/<vid>` (its page's facts: status, model, steps, tokens, the grant,
 * the approval it waits for) and `POST /v1/agent/runs/<vid>/replay` — `byteseek run --replay` over
 * HTTP, kept as a new run `<vid>.replay-<n>` that lists, opens and compares like any other
 * (agent/replay/save.ts). A replay sends no model request and runs no tool unless `liveTools`.
 */

import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { Logger } from "pino";
import { z } from "zod";
import type { LiveRuntime } from "../../agent/replay/replay.js";
import { replayAndSave } from "../../agent/replay/save.js";
import { runDetail } from "../../agent/run-detail.js";
import { ReplayJson, RunDetail } from "../../agent/run-schemas.js";
import { keys } from "../../shared/keys.js";
import { RUN_ID } from "../../tools/run-id.js";
import type { Runtime } from "../../tools/runtime.js";
import { ErrorJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import { ServerError } from "../errors.js";
import type { RouteDoc } from "../openapi.js";

export interface RunDetailRoutesOptions {
  tree: Tree;
  logger: Logger;
  /** Builds the prompts a replay checks; without it there is no replay route. */
  runtime?: Runtime;
  /** Runs tools again for `liveTools` (a runtime over the replay's tree); without it such a replay is refused. */
  live?: LiveRuntime;
}

const Params = z.object({
  vid: z.string().regex(RUN_ID, "a vid is letters, digits and _ . : @ -").describe("The run"),
});

export const ReplayBody = z
  .object({
    liveTools: z
      .boolean()
      .optional()
      .describe(
        "Run the tools again against the current workspace (with the usual gate), stopping at the first result that differs",
      ),
  })
  .strict();

const detailDoc = {
  responses: {
    200: {
      examples: {
        waiting: {
          vid: "r7",
          status: "running",
          detail: "waiting /byteseek/approval/r7/0",
          started: 1796457600000,
          steps: 1,
          calls: 1,
          tokens: { input: 812, output: 40 },
          tools: ["edit.write"],
          model: "gpt-4.1-mini",
          messages: 2,
          waiting: keys.approval("r7", 0),
          grant: {
            rule: "grants.default",
            powers: { read: true, write: true, exec: true, model: true, net: [], tree: ["/"] },
          },
        },
      },
    },
  },
} satisfies RouteDoc;

const replayDoc = {
  body: { recorded: {}, "tools run again": { liveTools: true } },
  responses: {
    200: {
      examples: {
        same: {
          vid: "r7.replay-1",
          of: "r7",
          live: false,
          turns: 1,
          steps: 2,
          calls: 1,
          executed: 0,
          modelRequests: 0,
          notes: [],
        },
      },
    },
  },
} satisfies RouteDoc;

export const runDetailRoutes: FastifyPluginAsyncZod<RunDetailRoutesOptions> = async function runDetailRoutes(
  app,
  { tree, logger, runtime, live },
) {
  app.get(
    "/v1/agent/runs/:vid",
    {
      schema: {
        summary: "One run: status, model, steps, tokens, tools used, the approval it waits for and its grant",
        params: Params,
        doc: detailDoc,
        response: { 200: RunDetail, 400: ErrorJson, 401: ErrorJson, 404: ErrorJson },
      },
    },
    async function detail(req): Promise<RunDetail> {
      return runDetail(tree, req.params.vid);
    },
  );

  if (!runtime) return;
  app.post(
    "/v1/agent/runs/:vid/replay",
    {
      schema: {
        summary:
          "Replay a finished run from its records (no model request; tools run again only with liveTools), kept as a new run to open or compare",
        params: Params,
        body: ReplayBody.optional(),
        doc: replayDoc,
        response: { 200: ReplayJson, 400: ErrorJson, 401: ErrorJson, 404: ErrorJson, 409: ErrorJson },
      },
    },
    async function replay(req): Promise<ReplayJson> {
      const liveTools = req.body?.liveTools === true;
      if (liveTools && !live)
        throw new ServerError(
          "HTTP_BAD_REQUEST",
          "this server cannot run tools again in a replay; replay without liveTools, or with byteseek run --replay <vid> --live-tools",
        );
      const saved = await replayAndSave({
        tree,
        runtime,
        logger: logger.child({ replay: req.params.vid }),
        vid: req.params.vid,
        ...(liveTools && live ? { live } : {}),
      });
      return { ...saved.report, vid: saved.vid, of: req.params.vid };
    },
  );
};
