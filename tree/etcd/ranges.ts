/** Key ranges [gte, lt) of an attempt's scans and range deletes, as etcd's compares and deletes take them. */
import { compareCodePoints } from "../path.js";

export interface Range {
  gte: string;
  lt: string;
}

export const inRange = (sk: string, r: Range): boolean =>
  compareCodePoints(sk, r.gte) >= 0 && compareCodePoints(sk, r.lt) < 0;

export /** Covers `ranges` with at most `max` ranges (sorted, neighbours joined): more conflicts, never fewer. */
function mergeRanges(ranges: Range[], max: number): Range[] {
  const sorted = [...ranges].sort((a, b) => compareCodePoints(a.gte, b.gte));
  const per = Math.ceil(sorted.length / max);
  const out: Range[] = [];
  for (let i = 0; i < sorted.length; i += per) {
    const group = sorted.slice(i, i + per);
    let lt = group[0]!.lt;
    for (const g of group) if (compareCodePoints(g.lt, lt) > 0) lt = g.lt;
    out.push({ gte: group[0]!.gte, lt });
  }
  return out;
}

/** Delete ranges merged, with every key written on its own cut out (etcd refuses overlaps). */
export function splitRanges(ranges: Range[], keys: string[]): Range[] {
  const sorted = [...ranges].sort((a, b) => compareCodePoints(a.gte, b.gte));
  const merged: Range[] = [];
  for (const r of sorted) {
    const last = merged[merged.length - 1];
    if (last && compareCodePoints(r.gte, last.lt) <= 0) {
      if (compareCodePoints(r.lt, last.lt) > 0) last.lt = r.lt;
    } else merged.push({ ...r });
  }
  const out: Range[] = [];
  for (const r of merged) {
    let gte = r.gte;
    for (const k of keys) {
      if (!inRange(k, { gte, lt: r.lt })) continue;
      if (compareCodePoints(gte, k) < 0) out.push({ gte, lt: k });
      gte = `${k}\0`;
    }
    if (compareCodePoints(gte, r.lt) < 0) out.push({ gte, lt: r.lt });
  }
  return out;
}
