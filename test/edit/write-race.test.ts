import { spawn } from "node:child_process";
import {
  appendFile,
  rename as fsRename,
  mkdir,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../tools/edit/atomic-write.js";
import { createRenameTool, createWriteTool } from "../../tools/edit/index.js";
import { failure, makeWorkspace, type TestWorkspace, tempResidue } from "./workspace.js";

const write = createWriteTool();
const rename = createRenameTool();

/**
 * A separate process that swaps `dir` for a symlink to `outside` and back, as fast as it can: the
 * attack on the window between the workspace check and the rename of an atomic write.
 */
const SWAPPER = `
const fs = require("node:fs");
const [dir, outside] = process.argv.slice(1);
const link = dir + ".link";
// each state is held a little while (0-2 ms), so a write can start in one and end in the other
const hold = () => { const end = performance.now() + Math.random() * 2; while (performance.now() < end); };
process.stdout.write("go\\n");
for (let i = 0; ; i++) {
  // a fresh name each round: a folder the tool re-created meanwhile never wedges the loop
  const real = dir + ".real" + i;
  try { fs.renameSync(dir, real); } catch { continue; }
  try { fs.symlinkSync(outside, link); fs.renameSync(link, dir); } catch { try { fs.unlinkSync(link); } catch {} }
  hold();
  try { if (fs.lstatSync(dir).isSymbolicLink()) fs.unlinkSync(dir); } catch {}
  try { fs.renameSync(real, dir); } catch {}
  hold();
}
`;

/** One attempt to put file `i` into dir/ (a write, or a move of a file made beforehand). */
const ATTEMPTS = {
  "edit.write": (ws: TestWorkspace, i: number) =>
    ws.call(write, { path: `dir/f${i}.txt`, text: `file ${i}\n` }),
  "edit.rename": async (ws: TestWorkspace, i: number) => {
    await writeFile(path.join(ws.root, `src${i}.txt`), `file ${i}\n`);
    return ws.call(rename, { from: `src${i}.txt`, to: `dir/f${i}.txt` });
  },
};

describe.each(Object.keys(ATTEMPTS) as (keyof typeof ATTEMPTS)[])(
  "%s against a folder swapped for a symlink (race)",
  (op) => {
    let ws: TestWorkspace;
    beforeEach(async () => {
      ws = await makeWorkspace();
    });
    afterEach(() => ws.cleanup());

    it("never puts a file outside the workspace (300 attempts or 10 s, whichever first)", async () => {
      const outside = path.join(ws.dir, "outside");
      const dir = path.join(ws.root, "dir");
      await mkdir(outside);
      await mkdir(dir);
      const swapper = spawn(process.execPath, ["-e", SWAPPER, dir, outside], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      const exited = new Promise((r) => swapper.once("exit", r));
      await new Promise((r) => swapper.stdout.once("data", r));
      let written = 0;
      const refused: Record<string, number> = {};
      let tries = 0;
      try {
        const until = Date.now() + 10_000;
        for (; tries < 300 && Date.now() < until; tries++) {
          await ATTEMPTS[op](ws, tries).then(
            () => written++,
            (e: { code?: string }) => {
              // refused (outside_root, path_changed, file_not_found…): fine, counted for the message
              refused[e.code ?? "?"] = (refused[e.code ?? "?"] ?? 0) + 1;
            },
          );
        }
      } finally {
        // its loop never yields to the event loop: only SIGKILL stops it
        swapper.kill("SIGKILL");
        await exited;
      }
      const landed = await readdir(outside);
      expect(
        landed,
        `${landed.length} of ${tries} writes landed outside the workspace (${written} written, refused: ${JSON.stringify(refused)})`,
      ).toEqual([]);
      expect(tries).toBeGreaterThanOrEqual(50);
      // it was a race, not a wall: writes got through between the swaps
      expect(written).toBeGreaterThan(0);
      await rm(outside, { recursive: true, force: true });
    }, 30_000);
  },
);

describe("an atomic write made over a file as it was read (unchangedSince)", () => {
  let ws: TestWorkspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it("is refused when another program wrote the file since, leaving that write and no temp file", async () => {
    const file = path.join(ws.root, "shared.txt");
    await writeFile(file, "line 1\n");
    const read = await stat(file);
    // Another program appends in place after the edit read the file.
    await appendFile(file, "line 2, by someone else\n");
    const err = await failure(
      writeFileAtomic(file, Buffer.from("LINE 1\n"), { display: "shared.txt", unchangedSince: read }),
      "file_changed",
    );
    expect(err.message).toContain("shared.txt changed while this edit was being made");
    expect(await readFile(file, "utf8")).toBe("line 1\nline 2, by someone else\n");
    expect(await tempResidue(ws.root)).toEqual([]);
  });

  it("is refused when the file was replaced by another (a new inode), even of the same size", async () => {
    const file = path.join(ws.root, "swapped.txt");
    await writeFile(file, "aaaa\n");
    const read = await stat(file);
    const other = path.join(ws.root, "other.txt");
    await writeFile(other, "bbbb\n");
    await fsRename(other, file);
    await failure(writeFileAtomic(file, Buffer.from("cccc\n"), { unchangedSince: read }), "file_changed");
    expect(await readFile(file, "utf8")).toBe("bbbb\n");
  });

  it("goes through when nobody wrote the file since", async () => {
    const file = path.join(ws.root, "mine.txt");
    await writeFile(file, "old\n");
    await writeFileAtomic(file, Buffer.from("new\n"), { unchangedSince: await stat(file) });
    expect(await readFile(file, "utf8")).toBe("new\n");
  });
});
