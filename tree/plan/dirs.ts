/** Directories as a write sees them: made with their parents (mkdir -p), child counts, the kept-history flag. */
import { parentOf } from "../path.js";
import { notADirectory } from "../rules.js";
import { type Found, PENDING, type PlanRecord, type WriteStore } from "../write-store.js";

/** Every ancestor directory of `key`, nearest first, down to `/`. */
export function ancestors(key: string): string[] {
  const out: string[] = [];
  for (let p = parentOf(key); p !== undefined; p = parentOf(p)) out.push(p);
  return out;
}

/** Makes sure directory `dir` exists, creating missing parents (mkdir -p). */
export function ensureDir(s: WriteStore, dir: string): Found {
  const existing = s.readNode(dir);
  if (existing) {
    if (existing.rec.k !== "index") throw notADirectory(dir);
    return existing;
  }
  const rec: PlanRecord = { k: "index", ver: 1, mt: s.now, n: 0, s: 0 };
  const made: Found = { rec, cr: PENDING, mr: PENDING };
  if (dir === "/") {
    s.putNode(dir, rec, PENDING);
    return made;
  }
  const parent = parentOf(dir)!;
  // Kept history below the parent may be for keys below this directory (removed, now made again).
  const p = ensureDir(s, parent);
  if (s.flagsKeptHistory && p.rec.hk === 1) rec.hk = 1;
  s.bump();
  s.putNode(dir, rec, PENDING);
  adjustCount(s, parent, +1, p);
  s.events.push({ t: "put", key: dir, k: "index", ver: 1, p: 0 });
  return made;
}

/** Changes the child count of an existing directory (whose current state the caller may hold). */
export function adjustCount(s: WriteStore, dir: string, delta: number, held?: Found): void {
  const f = held ?? s.readNode(dir);
  if (!f) return;
  s.putNode(dir, { ...f.rec, n: Math.max(0, (f.rec.n ?? 0) + delta) }, f.cr);
}

/** Marks directory `dir`, if it exists and the engine flags it: a value below it was deleted and its history kept. */
export function markKeptBelow(s: WriteStore, dir: string): void {
  if (!s.flagsKeptHistory) return;
  const f = s.readNode(dir);
  if (f && f.rec.hk !== 1) s.putNode(dir, { ...f.rec, hk: 1 }, f.cr);
}
