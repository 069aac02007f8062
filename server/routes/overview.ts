/**
 * `GET /v1/overview`: what a person oversees on one screen (the web page's landing view) that no
 * other route answers in one request — the runs counted by status with the ones worth a look, the
 * tools that failed in the last hour (from the index of the call records, which follows the tree), and the store: its revision,
 * size on disk and how durable an acknowledged write is. Approvals, MCP servers and the workspace
 * have their own routes (`/v1/approvals`, `/v1/mcp`, `/v1/info`).
 */

import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { runsOverview } from "../../agent/runs-overview.js";
import { keys } from "../../shared/keys.js";
import type { RecentCalls } from "../../tools/records/recent-calls.js";
import { ErrorJson } from "../../tree/http/index.js";
import type { Tree } from "../../tree/types.js";
import type { RouteDoc } from "../openapi.js";
import { OverviewJson } from "../overview-schemas.js";

/** The store as the server was started on it (server/main.ts); never a credential. */
export interface StoreInfo {
  engine: "classic" | "etcd" | "memory";
  /** The folder, or the etcd members and prefix. */
  location?: string;
  /** The embedded store's BYTESEEK_SYNC. */
  sync?: "always" | "never";
}

export interface OverviewRoutesOptions {
  tree: Tree;
  /** Absent: the store is not described (a server built without it, as in tests of other parts). */
  store?: StoreInfo;
  /** The index of the call records (the app's, shared with the tools routes): the failing tools read no record. */
  records: () => RecentCalls;
}

const HOUR = 3_600_000;

const OverviewQuery = z.object({
  windowMs: z.coerce
    .number()
    .int()
    .min(1000)
    .max(7 * 24 * HOUR)
    .optional()
    .describe("How far back failures are counted, ms (default one hour)"),
});

const doc = {
  responses: {
    200: {
      examples: {
        overview: {
          runs: {
            counts: { running: 1, interrupted: 0, done: 12, failed: 1 },
            shown: [
              {
                vid: "rmiv3k2a1b2c3",
                status: "running",
                detail: "waiting /byteseek/approval/rmiv3k2a1b2c3/0",
                started: 1764950400000,
                steps: 2,
                calls: 1,
                tokens: { input: 812, output: 64 },
              },
            ],
          },
          failing: {
            since: 1764946800000,
            tools: [
              {
                name: "shell.run",
                failures: 3,
                calls: 5,
                last: {
                  key: keys.toolRecord("rmiv2zz9f0e1d", 4),
                  kind: "runtime",
                  text: "exit code 2: make: *** No rule to make target 'tests'",
                  ts: 1764950100000,
                },
              },
            ],
            scanned: 41,
          },
          store: {
            engine: "classic",
            location: "/home/me/project/data",
            revision: 1893,
            compactedRev: 0,
            sizeBytes: 1048576,
            durable: true,
            durability: "every write is on disk before it is acknowledged (BYTESEEK_SYNC=always)",
          },
        },
      },
    },
  },
} satisfies RouteDoc;

export const overviewRoutes: FastifyPluginAsyncZod<OverviewRoutesOptions> = async function overviewRoutes(
  app,
  { tree, store, records },
) {
  app.get(
    "/v1/overview",
    {
      schema: {
        summary: "Runs by status, the tools failing lately, and the store's revision, size and durability",
        querystring: OverviewQuery,
        doc,
        response: { 200: OverviewJson, 400: ErrorJson, 401: ErrorJson },
      },
    },
    async function overview(req) {
      const since = Date.now() - (req.query.windowMs ?? HOUR);
      const [runs, failing, sizeBytes] = await Promise.all([
        runsOverview(tree),
        records().failures({ since }),
        store?.engine === "classic" && store.location ? folderBytes(store.location) : undefined,
      ]);
      return {
        runs,
        failing,
        store: {
          ...(store ? { engine: store.engine } : {}),
          ...(store?.location ? { location: store.location } : {}),
          revision: tree.revision(),
          compactedRev: tree.compactedRev(),
          ...(sizeBytes !== undefined ? { sizeBytes } : {}),
          ...(store ? durability(store) : {}),
        },
      };
    },
  );
};

/** What an acknowledged write survives on this store. */
function durability(store: StoreInfo): { durable: boolean; durability: string } {
  if (store.engine === "etcd")
    return { durable: true, durability: "etcd writes every change to its log on disk before it answers" };
  if (store.engine === "memory")
    return { durable: false, durability: "in memory: lost when the server stops" };
  return store.sync === "never"
    ? {
        durable: false,
        durability: "survives a crash of the server, not a power cut (BYTESEEK_SYNC=never)",
      }
    : {
        durable: true,
        durability: "every write is on disk before it is acknowledged (BYTESEEK_SYNC=always)",
      };
}

/** The bytes of the files directly in a LevelDB folder (it keeps no subfolders); undefined if unreadable. */
async function folderBytes(dir: string): Promise<number | undefined> {
  try {
    let total = 0;
    for (const entry of await readdir(dir, { withFileTypes: true }))
      if (entry.isFile())
        total += await stat(join(dir, entry.name)).then(
          (s) => s.size,
          () => 0,
        );
    return total;
  } catch {
    return undefined;
  }
}
