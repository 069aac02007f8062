/**
 * `GET /v1/approvals` (the pending approvals, oldest run first) and
 * `POST /v1/approvals/<vid>/<n> {"decision": "approve"|"deny", "scope"?, "reason"?, "content"?,
 * "cancel"?}`: a person's decision on a call (or a change) waiting at `/byteseek/approval/<vid>/<n>`,
 * or their answer to an upstream MCP server's question (content: the form's, checked against its
 * schema). Answers the decided entry; 400 for content that does not fit, 404 when there is none,
 * 409 when it was already decided.
 */

import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { keys } from "../../shared/keys.js";
import { ApprovalDecision, type Approvals, approvalKey } from "../../tools/gate/approvals.js";
import { ErrorJson } from "../../tree/http/index.js";
import { requestVia } from "../auth.js";
import type { RouteDoc } from "../openapi.js";
import { ApprovalJson, PendingApprovalsJson } from "../runtime-schemas.js";

export interface ApprovalRoutesOptions {
  approvals: Approvals;
}

const Params = z.object({
  vid: z.string().describe("the run"),
  n: z.string().describe("the approval's number in that run"),
});

const pendingEntry = {
  state: "pending",
  vid: "r7",
  tool: "fs.write",
  args: { path: "notes.txt", text: "hello" },
  reason: "fs.write needs confirmation",
  rule: "confirm",
  ts: 1764835200000,
};

/** What the document says beyond the schemas (server/openapi.ts). */
const listDoc = {
  responses: {
    200: { examples: { waiting: { pending: [{ key: keys.approval("r7", 1), entry: pendingEntry }] } } },
  },
} satisfies RouteDoc;
const decideDoc = {
  body: {
    approve: { decision: "approve", scope: "once" },
    deny: { decision: "deny", reason: "not that file" },
    answer: { decision: "approve", content: { name: "Ada" } },
    cancel: { decision: "deny", cancel: true },
  },
  responses: {
    200: {
      examples: {
        approved: { key: keys.approval("r7", 1), entry: { ...pendingEntry, state: "approved" } },
      },
    },
  },
} satisfies RouteDoc;

export const approvalRoutes: FastifyPluginAsyncZod<ApprovalRoutesOptions> = async function approvalRoutes(
  app,
  { approvals },
) {
  app.get(
    "/v1/approvals",
    {
      schema: {
        summary: "The approvals waiting for a person",
        doc: listDoc,
        response: {
          200: PendingApprovalsJson,
          401: ErrorJson,
        },
      },
    },
    async function listPending() {
      return { pending: (await approvals.pending()).map((p) => ({ key: p.key, entry: p.entry })) };
    },
  );

  app.post(
    "/v1/approvals/:vid/:n",
    {
      schema: {
        summary: "Approve or deny a call waiting at /byteseek/approval/<vid>/<n>",
        params: Params,
        body: ApprovalDecision,
        doc: decideDoc,
        response: {
          200: ApprovalJson,
          400: ErrorJson,
          401: ErrorJson,
          404: ErrorJson,
          409: ErrorJson,
        },
      },
    },
    async function decide(req) {
      const key = approvalKey(`${req.params.vid}/${req.params.n}`);
      // the credential that let the request in, for the audit (server/auth.ts)
      const entry = await approvals.decide(key, req.body, "person (http)", requestVia(req));
      return { key, entry };
    },
  );
};
