/**
 * Group commit with an fsync a commit (sync: always): writers answered by one commit get up to
 * commitDelayMs to come back and share the next fsync, instead of splitting into half groups.
 * The number of commits is read back from the store: one change-log record per commit group.
 */
import { ClassicLevel } from "classic-level";
import { afterEach, describe, expect, it } from "vitest";
import { openTree } from "../../tree/index.js";
import { str } from "../../tree/value.js";
import { tempDir } from "./temp-dir.js";

const WRITERS = 8;
const ROUNDS = 25;

/** Runs WRITERS closed-loop writers, writer i pausing i event-loop turns between its sets (its round trip). */
async function commitsFor(location: string, commitDelayMs: number): Promise<number> {
  const tree = await openTree({ backend: "classic", location, sync: "always", commitDelayMs });
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let r = 0; r < ROUNDS; r++) {
        await tree.set(`/w${w}`, str(`round ${r}`));
        for (let turn = 0; turn < w; turn++) await new Promise((resolve) => setImmediate(resolve));
      }
    }),
  );
  for (let w = 0; w < WRITERS; w++) expect((await tree.get(`/w${w}`))?.version).toBe(ROUNDS);
  await tree.close();
  const db = new ClassicLevel<string, string>(location, { keyEncoding: "utf8", valueEncoding: "utf8" });
  const records = (await db.keys({ gte: "r", lt: "s" }).all()).length;
  await db.close();
  return records;
}

describe("group commit with sync always", () => {
  const dirs: Array<Awaited<ReturnType<typeof tempDir>>> = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.remove();
  });
  const fresh = async () => {
    const d = await tempDir("byteseek-commit-delay-");
    dirs.push(d);
    return d.path;
  };

  it("lets the writers a commit answered come back and share the next fsync", async () => {
    // A long delay, so a slow machine cannot end the wait early: the group fills first.
    const waiting = await commitsFor(await fresh(), 200);
    const notWaiting = await commitsFor(await fresh(), 0);
    // Each round fits one commit when writers wait for each other (the first one may run alone).
    expect(waiting).toBeLessThanOrEqual(ROUNDS + 2);
    // Without the wait, the slower writers miss the commit and take one of their own.
    expect(notWaiting).toBeGreaterThan(waiting * 1.5);
  });
});
