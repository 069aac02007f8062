/**
 * Which tools failed lately, by scanning the call records under `/byteseek/tool/<vid>/<n>`: the
 * reference the live index (tools/records/failure-window.ts, what `GET /v1/overview` asks) answers
 * alike, and its fallback when the index cannot answer (its first read stopped at its bound, or a
 * window wider than it keeps). A run's records are appended densely (0, 1, 2, …), so each run's
 * recent calls are the tail of its folder: the scan reads each run's folder node for its count and
 * walks back from the last record until one is older than the window — the cost grows with the
 * runs and the recent calls, not with every call ever made.
 */

import { dirs } from "../../shared/keys.js";
import { childrenOf } from "../../tree/children.js";
import type { Tree } from "../../tree/types.js";
import type { RecentFailures, ToolFailures } from "./failure-schemas.js";
import { failuresAnswer, recordTime, talliedCall, tallyFailures } from "./failure-window.js";

const RECORDS_DIR = dirs.records;

export interface RecentFailuresOptions {
  /** The window's start, ms since the epoch. */
  since: number;
  /** At most this many tools (default 10). */
  limit?: number;
  /** At most this many records read in all (default 5,000); beyond, `truncated`. */
  maxRecords?: number;
}

/** The tools whose calls failed since `options.since`, most failures first. */
export async function recentFailures(tree: Tree, options: RecentFailuresOptions): Promise<RecentFailures> {
  const { since, limit = 10, maxRecords = 5000 } = options;
  const byTool = new Map<string, ToolFailures>();
  let scanned = 0;
  let truncated = false;
  runs: for await (const child of childrenOf(tree, RECORDS_DIR, 500)) {
    if (!child.name.endsWith("/")) continue;
    const dir = `${RECORDS_DIR}${child.name}`;
    const node = await tree.get(dir);
    const count = node?.kind === "index" ? node.count : 0;
    for (let n = count - 1; n >= 0; n--) {
      if (scanned >= maxRecords) {
        truncated = true;
        break runs;
      }
      const record = await tree.get(`${dir}${n}`);
      const value = record?.kind === "json" ? record.value.value : undefined;
      // a system entry counted among the children, or a value that is no call record: skipped
      const time = recordTime(value);
      if (time === undefined) continue;
      if (time < since) break;
      scanned++;
      const call = talliedCall(value);
      if (call) tallyFailures(byTool, `${dir}${n}`, time, call);
    }
  }
  return failuresAnswer(since, byTool, limit, scanned, truncated);
}
