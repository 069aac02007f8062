/**
 * `POST /v1/move` and `POST /v1/copy`: a value or a whole directory, in one revision
 * (tree/transfer.ts has the rules). Their statuses are the web page's contract: 409 when the target
 * exists (TREE_EXISTS, which the rest of the API answers 412: there it is a create-only condition),
 * 403 for what the tree keeps in place (TREE_READ_ONLY, TREE_HIDDEN).
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { ErrorJson, MoveJson, MoveResultJson } from "../../tree/http/index.js";
import { copy, move } from "../../tree/transfer.js";
import type { Tree } from "../../tree/types.js";
import { type ErrorCode, logFailure, mapError } from "../errors.js";
import type { RouteDoc } from "../openapi.js";

/** The statuses these routes answer where the API's table says otherwise. */
const MOVE_STATUS: Partial<Record<ErrorCode, number>> = {
  TREE_EXISTS: 409,
  TREE_READ_ONLY: 403,
};

const docOf = (verb: "move" | "copy") =>
  ({
    body: {
      [`${verb} a directory`]: { from: "/notes/", to: "/archive/notes/" },
      [`${verb} a value over another`]: { from: "/notes/today", to: "/notes/yesterday", overwrite: true },
    },
    responses: {
      200: { examples: { landed: { revision: 57, keys: 12 } } },
      409: {
        examples: {
          exists: {
            error: {
              code: "TREE_EXISTS",
              message: `/archive/notes/ already exists; ${verb} with overwrite to replace it, or choose another target`,
              key: "/archive/notes/",
            },
          },
        },
      },
    },
  }) satisfies RouteDoc;

export interface MoveRoutesOptions {
  tree: Tree;
}

export const moveRoutes: FastifyPluginAsyncZod<MoveRoutesOptions> = async function moveRoutes(app, { tree }) {
  app.setErrorHandler(function answerMoveError(err, req, reply) {
    const mapped = mapError(err);
    logFailure(req.log, err, mapped);
    reply.code(MOVE_STATUS[mapped.body.error.code] ?? mapped.status).send(mapped.body);
  });
  for (const verb of ["move", "copy"] as const) {
    app.post(
      `/v1/${verb}`,
      {
        schema: {
          summary:
            verb === "move"
              ? "Move a value or a directory (with everything below it) to another key, in one revision"
              : "Copy a value or a directory (with everything below it) to another key, in one revision",
          body: MoveJson,
          doc: docOf(verb),
          response: {
            200: MoveResultJson,
            400: ErrorJson,
            401: ErrorJson,
            403: ErrorJson,
            404: ErrorJson,
            409: ErrorJson,
            413: ErrorJson,
          },
        },
      },
      async function transfer(req) {
        const { from, to, overwrite, force } = req.body;
        const res = await (verb === "move" ? move : copy)(tree, from, to, {
          ...(overwrite ? { overwrite: true } : {}),
          ...(force ? { force: true } : {}),
        });
        return { revision: res.rev, keys: res.keys };
      },
    );
  }
};
