/**
 * The wire shapes of runs as listings show them (`GET /v1/agent/runs`, `GET /v1/overview`), in a
 * module of zod alone so the web page can type its answers from them (web/src/wire.ts).
 */
import { z } from "zod";

export const RUN_STATUSES = ["running", "interrupted", "done", "failed"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RunSummary = z.object({
  vid: z.string(),
  status: z
    .enum(RUN_STATUSES)
    .describe("running (a live process holds it), interrupted (its process died), done, failed"),
  detail: z.string().optional().describe("The status as stored, when it says more (waiting <approval key>)"),
  started: z.number().describe("Milliseconds since the epoch of the run's first message (0: none)"),
  steps: z.number().int().describe("Model calls"),
  calls: z.number().int().describe("Tool calls"),
  tokens: z.object({ input: z.number(), output: z.number() }),
  resume: z.string().optional().describe("The command that resumes an interrupted run"),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const RunsListing = z.object({
  runs: z.array(RunSummary),
  next: z.string().optional().describe("Pass as `after` for the next page"),
});
export type RunsListing = z.infer<typeof RunsListing>;

export const RunsOverview = z.object({
  counts: z
    .object({ running: z.number(), interrupted: z.number(), done: z.number(), failed: z.number() })
    .describe("Runs in each status"),
  shown: z
    .array(RunSummary)
    .describe("Running and interrupted runs, then the latest failed and done ones, newest first in each"),
});
export type RunsOverview = z.infer<typeof RunsOverview>;
