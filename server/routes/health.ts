/** `GET /healthz`: open (no token), answers the current and the oldest resumable revision. */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { HealthJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";

export interface HealthRoutesOptions {
  tree: Tree;
}

export const healthRoutes: FastifyPluginAsyncZod<HealthRoutesOptions> = async function healthRoutes(
  app,
  { tree },
) {
  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness: the current revision, and the oldest a watch can resume after",
        doc: { responses: { 200: { examples: { healthy: { ok: true, rev: 41, compactedRev: 0 } } } } },
        response: { 200: HealthJson },
      },
    },
    async function health() {
      return { ok: true, rev: tree.revision(), compactedRev: tree.compactedRev() };
    },
  );
};
