/**
 * Which tools failed lately (the web page's overview, `GET /v1/overview`): the call records under
 * `/byteseek/tool/<vid>/<n>` written since a time, counted by tool. A run's records are appended
 * densely (0, 1, 2, …), so each run's recent calls are the tail of its folder: the scan reads each
 * run's folder node for its count and walks back from the last record until one is older than the
 * window — the cost grows with the runs and the recent calls, not with every call ever made.
 */
import { childrenOf } from "../../tree/children.js";
import type { Tree } from "../../tree/types.js";
import { dirs } from "../doc/keys.js";
import type { RecentFailures, ToolFailures } from "./failure-schemas.js";
import { StoredRecord } from "./records.js";

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
      // a system entry counted among the children has no record at its number
      if (record === undefined || record.kind === "index") continue;
      scanned++;
      if (record.mtime < since) break;
      const parsed = StoredRecord.safeParse(record.kind === "json" ? record.value.value : undefined);
      if (!parsed.success || parsed.data.state === "started") continue;
      tally(byTool, `${dir}${n}`, record.mtime, parsed.data);
    }
  }
  const tools = [...byTool.values()]
    .filter((t) => t.failures > 0)
    .sort((a, b) => b.failures - a.failures || b.last.ts - a.last.ts || a.name.localeCompare(b.name))
    .slice(0, limit);
  return { since, tools, scanned, ...(truncated ? { truncated } : {}) };
}

function tally(
  byTool: Map<string, ToolFailures>,
  key: string,
  ts: number,
  r: { name: string; kind: string; isError: boolean; text: string },
): void {
  let t = byTool.get(r.name);
  if (!t) {
    t = { name: r.name, failures: 0, calls: 0, last: { key: "", kind: "", text: "", ts: 0 } };
    byTool.set(r.name, t);
  }
  t.calls++;
  if (!r.isError) return;
  t.failures++;
  // records are walked newest first within a run, but runs in name order: keep the newest overall
  if (ts >= t.last.ts) t.last = { key, kind: r.kind, text: (r.text.split("\n")[0] ?? "").slice(0, 200), ts };
}
