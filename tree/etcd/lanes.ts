/**
 * Lanes: writes of this process that conflict, on a directory (its child count or append
 * sequence) or anywhere, go through that directory's lane one at a time; while a lane is busy,
 * new writes to the same directory queue in it at once rather than attempting and conflicting.
 */
import { parentOf } from "../path.js";

/** Waits for the lane of `key`, and answers the function that lets the next writer in. */
export type TakeLane = (key: string) => Promise<() => void>;

export function createLanes(): TakeLane {
  const lanes = new Map<string, { tail: Promise<void>; holders: number }>();
  return async function takeLane(key) {
    let entry = lanes.get(key);
    if (!entry) {
      entry = { tail: Promise.resolve(), holders: 0 };
      lanes.set(key, entry);
    }
    const lane = entry;
    lane.holders++;
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const before = lane.tail;
    lane.tail = before.then(() => mine);
    await before;
    return () => {
      release();
      if (--lane.holders === 0) lanes.delete(key);
    };
  };
}

/** The lane of a write to `key`: its directory's (whose count it may change). */
export function laneOf(key: string): string {
  return typeof key === "string" ? (parentOf(key) ?? "/") : "";
}
