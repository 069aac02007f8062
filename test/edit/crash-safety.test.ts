import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sweepTempFiles } from "../../tools/edit/index.js";
import { makeWorkspace, type TestWorkspace, tempResidue } from "./workspace.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, "..", "fixtures", "edit-atomic-writer.mjs");
const compiled = path.join(here, "..", "..", "dist", "tools", "edit", "atomic-write.js");
const SIZE = 24 * 1024 * 1024;
const ROUNDS = 8;

function startWriter(target: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [fixture, target, String(SIZE)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout!.once("data", () => resolve(child));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** The file is whole: one of the contents a writer ever produced, never a mix or a cut. */
function isWhole(buf: Buffer, old: Buffer): boolean {
  if (buf.equals(old)) return true;
  if (buf.length !== SIZE) return false;
  const fill = buf[0];
  return (fill === 0x41 || fill === 0x42) && buf.equals(Buffer.alloc(SIZE, fill));
}

describe("atomic writes under SIGKILL", () => {
  let ws: TestWorkspace;
  beforeAll(() => {
    if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run npm run build first`);
  });
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it("leaves the old or the new content, and the sweep removes every temp file left", async () => {
    const target = path.join(ws.root, "big.dat");
    const old = Buffer.alloc(1024 * 1024, 0x4f);
    await writeFile(target, old);
    let residueSeen = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const child = await startWriter(target);
      // let the write get going for a varying moment, then kill it mid-flight
      await new Promise((r) => setTimeout(r, (round * 7) % 40));
      await killed(child);
      expect(isWhole(await readFile(target), old), `round ${round}`).toBe(true);
      if ((await tempResidue(ws.root)).length > 0) residueSeen++;
      await sweepTempFiles(ws.root);
      expect(await tempResidue(ws.root)).toEqual([]);
    }
    // not asserted (timing-dependent): how often a kill landed while a temp file existed
    ws.ctx.logger.info({ residueSeen }, "kills during a write");
  });
});
