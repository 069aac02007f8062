import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGrepTool, createLsTool, createReadTool } from "../../tools/edit/index.js";
import type { ToolOutput } from "../../tools/types.js";
import { makeWorkspace, type TestWorkspace } from "./workspace.js";

const read = createReadTool();
const grep = createGrepTool();
const ls = createLsTool();

/**
 * A separate process that swaps `entry` (a file or a folder in the workspace) for a symlink to
 * `outside` and back, as fast as it can: the attack on the window between the workspace check of
 * a path and the open of what it names.
 */
const SWAPPER = `
const fs = require("node:fs");
const [entry, outside] = process.argv.slice(1);
const link = entry + ".link";
const hold = () => { const end = performance.now() + Math.random() * 0.5; while (performance.now() < end); };
process.stdout.write("go\\n");
for (let i = 0; ; i++) {
  const real = entry + ".real" + i;
  try { fs.renameSync(entry, real); } catch { continue; }
  try { fs.symlinkSync(outside, link); fs.renameSync(link, entry); } catch { try { fs.unlinkSync(link); } catch {} }
  hold();
  try { if (fs.lstatSync(entry).isSymbolicLink()) fs.unlinkSync(entry); } catch {}
  try { fs.renameSync(real, entry); } catch {}
  hold();
}
`;

const SECRET = "SECRET-OUTSIDE-THE-WORKSPACE";
const INSIDE = "inside-the-workspace";

type Attempt = (ws: TestWorkspace) => Promise<ToolOutput>;

/** Each shape of the attack: what is swapped, and the call that reads through it. */
const CASES: Record<string, { swapped: "file" | "folder"; attempt: Attempt; ok?: string }> = {
  "edit.read of a file swapped for a symlink": {
    swapped: "file",
    attempt: (ws) => ws.call(read, { path: "entry" }),
  },
  "edit.read of a file in a folder swapped for a symlink": {
    swapped: "folder",
    attempt: (ws) => ws.call(read, { path: "entry/note.txt" }),
  },
  "edit.grep in a folder swapped for a symlink": {
    swapped: "folder",
    attempt: (ws) => ws.call(grep, { pattern: "workspace", ignoreCase: true, path: "entry" }),
  },
  "edit.ls of a folder swapped for a symlink": {
    swapped: "folder",
    attempt: (ws) => ws.call(ls, { path: "entry" }),
    ok: "note.txt",
  },
};

describe.each(Object.keys(CASES))("%s (race)", (name) => {
  const { swapped, attempt, ok = "inside" } = CASES[name] as (typeof CASES)[string];
  let ws: TestWorkspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it("never returns what lies outside the workspace (300 reads or 5 s, whichever first)", async () => {
    const entry = path.join(ws.root, "entry");
    let outside: string;
    if (swapped === "file") {
      outside = path.join(ws.dir, "secret.txt");
      await writeFile(outside, `${SECRET}\n`);
      await writeFile(entry, `${INSIDE}\n`);
    } else {
      outside = path.join(ws.dir, "secrets");
      await mkdir(outside);
      await writeFile(path.join(outside, "note.txt"), `${SECRET}\n`);
      await writeFile(path.join(outside, "SECRET-NAME.txt"), `${SECRET}\n`);
      await mkdir(entry);
      await writeFile(path.join(entry, "note.txt"), `${INSIDE}\n`);
    }
    const swapper = spawn(process.execPath, ["-e", SWAPPER, entry, outside], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    const exited = new Promise((r) => swapper.once("exit", r));
    await new Promise((r) => swapper.stdout.once("data", r));
    let leaked = 0;
    let inside = 0;
    const refused: Record<string, number> = {};
    let tries = 0;
    try {
      const until = Date.now() + 5_000;
      for (; tries < 300 && Date.now() < until; tries++) {
        await attempt(ws).then(
          (out) => {
            if (out.text.includes("SECRET")) leaked++;
            else if (out.text.includes(ok)) inside++;
          },
          (e: { code?: string }) => {
            refused[e.code ?? "?"] = (refused[e.code ?? "?"] ?? 0) + 1;
          },
        );
      }
    } finally {
      // its loop never yields to the event loop: only SIGKILL stops it
      swapper.kill("SIGKILL");
      await exited;
    }
    expect(
      leaked,
      `${leaked} of ${tries} reads returned outside content (${inside} inside, refused: ${JSON.stringify(refused)})`,
    ).toBe(0);
    expect(tries).toBeGreaterThanOrEqual(50);
    // it was a race, not a wall: reads got through between the swaps
    expect(inside).toBeGreaterThan(0);
  }, 30_000);
});
