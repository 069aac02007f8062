/**
 * `POST /v1/agent/turn {vid?, input, approve?}`: one turn of the agent. Answers the final text,
 * the stop reason, the records made and the token usage; with `Accept: text/event-stream`, every
 * AgentEvent as it happens (`event: <type>`, data the event as JSON), ending with `turn_end`.
 * A client that goes away aborts the turn. A model failure answers its LLM_* error (JSON) or an
 * `error` event before `turn_end` (SSE). `POST /v1/agent/runs/<vid>/resume` continues a run whose
 * process died, answered the same way; `GET /v1/agent/runs?status=` lists the runs.
 */

import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { AgentError, type AgentErrorCode } from "../../agent/errors.js";
import type { AgentEvent, TurnResult } from "../../agent/events.js";
import { ClientLlmSettings } from "../../agent/llm-config.js";
import type { Agent } from "../../agent/loop.js";
import { listRuns, RUN_STATUSES, RunsListing } from "../../agent/runs.js";
import { keys } from "../../shared/keys.js";
import { formatEvent } from "../../shared/sse.js";
import { ErrorJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import { requestVia } from "../auth.js";
import { mapError } from "../errors.js";
import type { RouteDoc } from "../openapi.js";
import { TurnJson, type TurnStreamEvent } from "../runtime-schemas.js";
import { sseHead, writeSse } from "../sse.js";

export interface AgentRoutesOptions {
  tree: Tree;
  agent: Agent;
  /** Turns in flight; the app aborts them all when it closes. */
  turns: Set<AbortController>;
}

export const TurnBody = z
  .object({
    vid: z
      .string()
      .optional()
      .describe("The run to continue (its messages are under /byteseek/session/<vid>/); absent: a new run"),
    input: z.string().min(1).describe("The user's message"),
    approve: z.boolean().optional().describe("Approve calls of tools that need confirmation"),
    llm: ClientLlmSettings.optional(),
  })
  .strict();

export const ResumeBody = z
  .object({
    approve: z.boolean().optional().describe("Approve calls of tools that need confirmation"),
    llm: ClientLlmSettings.optional(),
  })
  .strict();

const RunsQuery = z
  .object({
    status: z.enum(RUN_STATUSES).optional().describe("Only runs with this status"),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe("At most this many runs (default 100)"),
    after: z.string().optional().describe("The `next` of the previous page"),
    vid: z.string().optional().describe("Only runs whose id contains this text"),
    tool: z.string().optional().describe("Only runs that called a tool whose name contains this text"),
  })
  .strict();

const TurnStream = z
  .string()
  .describe(
    "text/event-stream: one event per AgentEvent (`event: <type>`, data the event as JSON: turn_start, step, text_delta, toolcall_start, toolcall_delta, retry, tool_start, tool_progress (a running call's progress or its MCP upstream's log line, at most 20 a call), approval_pending, tool_result), an `error` event when the model fails, and last `turn_end` (data {type, result})",
  );

const turnResult = {
  vid: "r7",
  text: "Today's note says: hello world.",
  reason: "done",
  steps: 2,
  records: [keys.toolRecord("r7", 1)],
  calls: [{ name: "tree.get", kind: "ok", isError: false, record: keys.toolRecord("r7", 1) }],
  usage: { inputTokens: 812, outputTokens: 40 },
} satisfies z.infer<typeof TurnJson>;

/** What the document says beyond the schemas (server/openapi.ts). */
const doc = {
  headers: { Accept: "text/event-stream: the turn's events as they happen, instead of one JSON answer" },
  body: {
    ask: { input: "What does today's note say?" },
    "continue a run": { vid: "r7", input: "And yesterday's?" },
  },
  responses: {
    200: {
      examples: { answer: turnResult },
      alternative: {
        media: "text/event-stream",
        when: "with Accept: text/event-stream",
        schema: TurnStream,
        examples: {
          events: [
            "event: turn_start",
            'data: {"type":"turn_start","vid":"r7"}',
            "",
            "event: tool_start",
            'data: {"type":"tool_start","id":"c1","name":"tree.get","args":{"key":"/notes/today"}}',
            "",
            "event: turn_end",
            `data: ${JSON.stringify({ type: "turn_end", result: turnResult })}`,
            "",
            "",
          ].join("\n"),
        },
      },
    },
  },
} satisfies RouteDoc;

/** The resume route's examples: a turn's answer, continued from the records. */
const resumeDoc = {
  responses: { 200: { examples: { resumed: turnResult } } },
} satisfies RouteDoc;

/** The runs listing's example: one interrupted run with the command that resumes it. */
const runsDoc = {
  responses: {
    200: {
      examples: {
        runs: {
          runs: [
            {
              vid: "r7",
              status: "interrupted",
              started: 1796457600000,
              steps: 3,
              calls: 2,
              tokens: { input: 2400, output: 120 },
              resume: "byteseek run --resume r7",
              tools: ["edit.write", "shell.run"],
            },
            {
              vid: "r8",
              status: "done",
              started: 1796457700000,
              steps: 1,
              calls: 0,
              tokens: { input: 800, output: 30 },
            },
            {
              vid: "mcp-claude-code-3",
              status: "session",
              started: 1796457800000,
              steps: 0,
              calls: 4,
              tokens: { input: 0, output: 0 },
              tools: ["edit.read"],
              client: { name: "claude-code", version: "2.1.0", transport: "stdio" },
            },
          ],
        },
      },
    },
  },
} satisfies RouteDoc;

export const agentRoutes: FastifyPluginAsyncZod<AgentRoutesOptions> = async function agentRoutes(
  app,
  { tree, agent, turns },
) {
  app.post(
    "/v1/agent/turn",
    {
      schema: {
        summary: "Run one agent turn (JSON answer, or server-sent events with Accept: text/event-stream)",
        body: TurnBody,
        doc,
        response: {
          200: TurnJson,
          400: ErrorJson,
          401: ErrorJson,
          502: ErrorJson,
          503: ErrorJson,
          504: ErrorJson,
        },
      },
    },
    async function turn(req, reply) {
      const { vid, input, approve, llm } = req.body;
      return answerTurn(req, reply, (signal, onEvent) =>
        agent.runTurn({
          input,
          signal,
          ...(vid ? { vid } : {}),
          ...(approve ? { approve, approvedBy: "person (http)", approvedVia: requestVia(req) } : {}),
          ...(llm ? { llm } : {}),
          ...(onEvent ? { onEvent } : {}),
        }),
      );
    },
  );

  app.post(
    "/v1/agent/runs/:vid/resume",
    {
      schema: {
        summary:
          "Resume a run whose process died: interrupted calls are settled from their records (never run twice where that is unsafe), then the turn goes on (JSON answer, or server-sent events with Accept: text/event-stream)",
        params: z.object({ vid: z.string().describe("The run to resume") }),
        body: ResumeBody.optional(),
        doc: resumeDoc,
        response: {
          200: TurnJson,
          400: ErrorJson,
          401: ErrorJson,
          404: ErrorJson,
          409: ErrorJson,
          502: ErrorJson,
          503: ErrorJson,
          504: ErrorJson,
        },
      },
    },
    async function resume(req, reply) {
      const { approve, llm } = req.body ?? {};
      return answerTurn(req, reply, (signal, onEvent) =>
        agent.resumeRun({
          vid: req.params.vid,
          signal,
          ...(approve ? { approve, approvedBy: "person (http)", approvedVia: requestVia(req) } : {}),
          ...(llm ? { llm } : {}),
          ...(onEvent ? { onEvent } : {}),
        }),
      );
    },
  );

  app.get(
    "/v1/agent/runs",
    {
      schema: {
        summary: "The runs in the tree with their status, start, steps, calls and tokens",
        querystring: RunsQuery,
        doc: runsDoc,
        response: { 200: RunsListing, 400: ErrorJson, 401: ErrorJson },
      },
    },
    async function runs(req) {
      const { status, limit, after, vid, tool } = req.query;
      return listRuns(tree, {
        ...(status ? { status } : {}),
        ...(vid ? { vid } : {}),
        ...(tool ? { tool } : {}),
        ...(limit ? { limit } : {}),
        ...(after ? { after } : {}),
      });
    },
  );

  /**
   * A turn (or resume) answered as JSON, or as server-sent events with Accept: text/event-stream.
   * A client that goes away aborts it.
   */
  async function answerTurn(
    req: FastifyRequest,
    reply: FastifyReply,
    run: (signal: AbortSignal, onEvent?: (e: AgentEvent) => void) => Promise<TurnResult>,
  ) {
    const ac = new AbortController();
    turns.add(ac);
    // The response closing before it was written: the client went away.
    reply.raw.on("close", () => {
      if (!reply.raw.writableFinished) ac.abort();
    });
    try {
      if (!wantsEvents(req.headers.accept)) {
        const result = await run(ac.signal);
        if (result.reason === "model_error") throw turnError(result);
        return toJson(result);
      }
      const res = reply.raw;
      reply.hijack();
      res.writeHead(200, sseHead(tree, req.id));
      // Events come synchronously from the loop; they are written in order, minding backpressure.
      let written = Promise.resolve();
      const send = (name: string, data: unknown) => {
        written = written.then(() => writeSse(res, formatEvent(name, data), ac.signal));
      };
      try {
        await run(ac.signal, function onEvent(e: AgentEvent) {
          if (e.type === "turn_end" && e.result.reason === "model_error")
            send("error", mapError(turnError(e.result)).body.error);
          const wire: TurnStreamEvent =
            e.type === "turn_end" ? { type: e.type, result: toJson(e.result) } : e;
          send(wire.type, wire);
        });
      } catch (err) {
        const mapped = mapError(err);
        if (!mapped.expected) req.log.error({ err }, "agent turn failed");
        send("error", mapped.body.error);
      }
      await written;
      if (!res.writableEnded) res.end();
      return reply;
    } finally {
      turns.delete(ac);
    }
  }
};

function wantsEvents(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/event-stream\b/i.test(accept);
}

function toJson(r: TurnResult): TurnJson {
  return {
    vid: r.vid,
    text: r.text,
    reason: r.reason,
    steps: r.steps,
    records: r.records,
    calls: r.calls,
    usage: r.usage,
    ...(r.resumed ? { resumed: r.resumed } : {}),
  };
}

/** A turn the model failed, as the error it answers: its LLM_* code, with what the turn did. */
function turnError(r: TurnResult): AgentError {
  const code = (r.error?.code ?? "LLM_BAD_RESPONSE") as AgentErrorCode;
  return new AgentError(code, r.error?.message ?? r.text, { vid: r.vid, records: r.records });
}
