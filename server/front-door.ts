/**
 * What the node:http server does with a request before the fast path or fastify sees it: refuses
 * one from another site (server/request-guard.ts), and bounds the time its body may take to
 * arrive. Both answer on the raw response, with the headers and the log line every answer has.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Tree } from "../tree/types.js";
import { answerHeaders, requestLine } from "./answer.js";
import { mapError, ServerError } from "./errors.js";
import { type RequestGuard, sendRefusal } from "./request-guard.js";

export interface FrontDoorDeps {
  tree: Tree;
  logger: Logger;
  guard: RequestGuard;
  /** The id a request gets (one counter for every path). */
  requestId(req: IncomingMessage): string;
  /** Time to receive a whole body after the headers, ms; 0: no bound. */
  bodyTimeoutMs: number;
}

export interface FrontDoor {
  /** Refuses the request (and says false), or bounds its body and says true: the paths' turn. */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** fastify's id for a request: kept, for a request with a body, should its body time out. */
  fastifyId(id: string, req: IncomingMessage): string;
}

/** Whether a request comes with a body (framed by a length or chunked). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

export function createFrontDoor(d: FrontDoorDeps): FrontDoor {
  const { bodyTimeoutMs } = d;
  const fastifyIds = new WeakMap<IncomingMessage, string>();

  /** Answers on the raw response; logs it unless fastify took the request (its hook logs those). */
  function refuse(
    req: IncomingMessage,
    res: ServerResponse,
    err: ServerError,
    o: { start?: number; id?: string | undefined; written?: () => void } = {},
  ) {
    const { start = performance.now(), written } = o;
    const id = o.id ?? d.requestId(req);
    const mapped = mapError(err);
    sendRefusal(res, mapped.status, JSON.stringify(mapped.body), answerHeaders(d.tree, id, false), written);
    if (o.id !== undefined) return;
    d.logger.info(
      {
        reqId: id,
        ...requestLine(req.method, req.url ?? "", mapped.status, performance.now() - start),
        refused: mapped.body.error.code,
      },
      "request",
    );
  }

  /**
   * A body that has not fully arrived `bodyTimeoutMs` after its headers is cut: 408 (unless an
   * answer has begun) and the socket closed. (Node's own requestTimeout stops counting once a
   * request is handed to its handler, so a body that never ends would be waited for forever.)
   */
  function boundBody(req: IncomingMessage, res: ServerResponse) {
    const start = performance.now();
    const timer = setTimeout(function bodyTimedOut() {
      if (req.complete) return;
      const err = new ServerError(
        "HTTP_REQUEST_TIMEOUT",
        `the request body did not arrive within ${bodyTimeoutMs} ms (BYTESEEK_BODY_TIMEOUT): send it whole, promptly`,
        { limitMs: bodyTimeoutMs },
      );
      if (res.headersSent) req.socket.destroy();
      else refuse(req, res, err, { start, id: fastifyIds.get(req), written: () => req.socket.destroy() });
    }, bodyTimeoutMs);
    // One listener: a body that arrived and an answer still to come is left alone (req.complete).
    res.once("close", () => clearTimeout(timer));
  }

  return {
    admit(req, res) {
      const refused = d.guard(req);
      if (refused) {
        refuse(req, res, refused);
        return false;
      }
      if (bodyTimeoutMs > 0 && hasBody(req)) boundBody(req, res);
      return true;
    },
    fastifyId(id, req) {
      if (bodyTimeoutMs > 0 && hasBody(req)) fastifyIds.set(req, id);
      return id;
    },
  };
}
