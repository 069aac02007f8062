/**
 * The wire shape of the tools failing lately (tools/records/failure-window.ts, `GET /v1/overview`), in a
 * module of zod alone so the web page can type its answers from it (web/src/wire.ts).
 */
import { z } from "zod";

export const ToolFailures = z.object({
  name: z.string().describe("The tool"),
  failures: z.number().int().describe("Calls in the window that failed (isError)"),
  calls: z.number().int().describe("Calls in the window, failed or not"),
  last: z
    .object({
      key: z.string().describe("The record of the latest failure"),
      kind: z.string().describe("Its kind: vet, arg, denied, runtime or truncated"),
      text: z.string().describe("The first line of what the model was told"),
      ts: z.number().describe("When it was recorded (ms since the epoch)"),
    })
    .describe("The latest failure"),
});
export type ToolFailures = z.infer<typeof ToolFailures>;

export const RecentFailures = z.object({
  since: z.number().describe("The window's start (ms since the epoch)"),
  tools: z.array(ToolFailures).describe("Tools with failures in the window, most failures first"),
  scanned: z.number().int().describe("Call records in the window (calls still running included)"),
  truncated: z
    .boolean()
    .optional()
    .describe("Read by a scan that stopped at its bound (5,000 records): older runs were not read"),
});
export type RecentFailures = z.infer<typeof RecentFailures>;
