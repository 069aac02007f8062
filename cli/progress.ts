import type { Writable } from "node:stream";
import { formatProgress } from "./format.js";

export interface ProgressBar {
  update(done: number): void;
  /** Draws the final state (if anything was drawn) and ends the line. */
  finish(done: number): void;
}

/**
 * A progress bar redrawn in place on a terminal. Nothing is drawn for the first `delayMs`, so
 * small imports stay quiet; when disabled (not a terminal) it does nothing at all.
 */
export function createProgressBar(options: {
  stream: Writable;
  total: number | undefined;
  enabled: boolean;
  delayMs?: number;
  intervalMs?: number;
}): ProgressBar {
  const { stream, total, enabled, delayMs = 300, intervalMs = 100 } = options;
  const started = Date.now();
  let drawnAt = 0;
  let drawn = false;
  const draw = (done: number) => {
    stream.write(`\r\x1b[K${formatProgress(done, total)}`);
    drawn = true;
    drawnAt = Date.now();
  };
  return {
    update(done) {
      if (!enabled) return;
      const now = Date.now();
      if (now - started < delayMs || now - drawnAt < intervalMs) return;
      draw(done);
    },
    finish(done) {
      if (!enabled || !drawn) return;
      draw(done);
      stream.write("\n");
    },
  };
}
