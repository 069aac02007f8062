/** Bearer-token authentication: every route but the open ones needs `Authorization: Bearer <token>`. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { ServerError } from "./errors.js";

/** Paths answered without a token. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(["/healthz"]);

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();

/**
 * Whether an Authorization header carries `token` as a bearer token. Both sides are hashed first, so
 * the comparison takes the same time whatever the length or content of what was sent.
 */
export function createBearerCheck(token: string): (header: string | undefined) => boolean {
  const want = digest(token);
  return function bearerHolds(header) {
    const m = typeof header === "string" ? /^Bearer[ ]+(.+)$/i.exec(header.trim()) : null;
    return m !== null && timingSafeEqual(digest(m[1]!), want);
  };
}

/** An onRequest check for `token`: throws HTTP_UNAUTHORIZED, saying what to send. */
export function createAuthCheck(token: string): (req: FastifyRequest) => void {
  const holds = createBearerCheck(token);
  return function checkBearer(req) {
    const q = req.url.indexOf("?");
    const path = q < 0 ? req.url : req.url.slice(0, q);
    // Routes marked `config: { public: true }` (the web page's shell, which holds no data) are open too.
    if (OPEN_PATHS.has(path) || req.routeOptions.config.public === true) return;
    const header = req.headers.authorization;
    if (!holds(header))
      throw new ServerError(
        "HTTP_UNAUTHORIZED",
        header === undefined
          ? "this server needs a token: send Authorization: Bearer <BYTESEEK_TOKEN>"
          : "the bearer token is not the server's BYTESEEK_TOKEN",
      );
  };
}
