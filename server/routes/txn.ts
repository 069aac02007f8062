/** `POST /v1/txn`: etcd's compare / success / failure transaction, at most 128 operations. */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { TreeError } from "../../tree/errors.js";
import { ErrorJson, TxnResultJson, txnResultToJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import { mapError } from "../errors.js";
import type { RouteDoc } from "../openapi.js";
import { TxnJson } from "../schemas.js";
import { txnFromJson } from "../wire.js";

/** What the document says beyond the schemas (server/openapi.ts). */
const doc = {
  body: {
    "compare and set": {
      compare: [{ key: "/counter", target: "version", op: "==", value: 3 }],
      success: [
        { op: "set", key: "/counter", value: 8 },
        { op: "get", key: "/counter" },
      ],
      failure: [{ op: "get", key: "/counter" }],
    },
  },
  responses: {
    200: {
      examples: {
        succeeded: {
          succeeded: true,
          rev: 52,
          results: [
            { key: "/counter", rev: 52, version: 4 },
            {
              key: "/counter",
              kind: "int64",
              value: 8,
              version: 4,
              createRev: 9,
              modRev: 52,
              mtime: 1764835200000,
              ro: false,
            },
          ],
        },
      },
    },
  },
} satisfies RouteDoc;

export interface TxnRoutesOptions {
  tree: Tree;
}

export const txnRoutes: FastifyPluginAsyncZod<TxnRoutesOptions> = async function txnRoutes(app, { tree }) {
  app.post(
    "/v1/txn",
    {
      schema: {
        summary: "Run a transaction: if every compare holds, the success operations, else the failure ones",
        body: TxnJson,
        doc,
        response: { 200: TxnResultJson, 400: ErrorJson, 401: ErrorJson, 409: ErrorJson, 413: ErrorJson },
      },
      // A body that is not a transaction answers the tree's own code, as the embedded tree would.
      attachValidation: true,
    },
    async function runTxn(req) {
      if (req.validationError) {
        const { message, issues } = mapError(req.validationError).body.error;
        throw new TreeError("TREE_TXN_INVALID", message, { issues });
      }
      return txnResultToJson(await tree.txn(txnFromJson(req.body)));
    },
  );
};
