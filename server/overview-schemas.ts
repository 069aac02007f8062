/**
 * What `GET /v1/overview` answers (server/routes/overview.ts), in a module of zod alone so the web
 * page can type its answers from it (web/src/wire.ts).
 */
import { z } from "zod";
import { RunsOverview } from "../agent/run-schemas.js";
import { RecentFailures } from "../tools/records/failure-schemas.js";

export const StoreJson = z.object({
  engine: z
    .enum(["classic", "etcd", "memory"])
    .optional()
    .describe("classic (LevelDB in a folder), etcd, memory"),
  location: z.string().optional().describe("The store's folder, or its etcd members and prefix"),
  revision: z.number().describe("The store's current revision"),
  compactedRev: z.number().describe("The oldest revision a watch can resume after"),
  sizeBytes: z.number().optional().describe("Bytes on disk (the embedded store's folder)"),
  durable: z.boolean().optional().describe("An acknowledged write survives a power cut"),
  durability: z.string().optional().describe("What an acknowledged write survives, and the setting"),
});

export const OverviewJson = z.object({
  runs: RunsOverview,
  failing: RecentFailures.describe("Tools whose calls failed in the window"),
  store: StoreJson,
});
export type OverviewJson = z.infer<typeof OverviewJson>;
