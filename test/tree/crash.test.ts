import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { int64, str } from "../../tree/value.js";
import { getValue, listAll } from "./helpers.js";
import { tempDir } from "./temp-dir.js";

const fixture = fileURLToPath(new URL("../fixtures/tree-writer.mjs", import.meta.url));
const compiled = fileURLToPath(new URL("../../dist/tree/index.js", import.meta.url));

/** Runs the writer until it has reported `lines` completed writes, then SIGKILLs it; answers the reports. */
async function writeUntilKilled(
  location: string,
  round: number,
  sync: string,
  lines: number,
): Promise<string[]> {
  const child = spawn(process.execPath, [fixture, location, String(round), sync], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const reports: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith("ready")) continue;
    reports.push(line);
    if (reports.length === lines) child.kill("SIGKILL");
  }
  const { code, signal } = await exited;
  expect(signal, `the writer should have been killed, but exited ${code}: ${stderr}`).toBe("SIGKILL");
  return reports;
}

/** Checks that every write the writer reported is in the tree, and the appends are dense. */
async function checkReports(tree: Tree, reports: string[]): Promise<void> {
  const logs = new Map<string, number>();
  let maxRev = 0;
  for (const report of reports) {
    const [what, ...rest] = report.split(" ");
    if (what === "set") {
      const [key = "", i = "", rev = ""] = rest;
      expect((await getValue(tree, key)).value).toEqual(int64(BigInt(i)));
      maxRev = Math.max(maxRev, Number(rev));
    } else if (what === "append") {
      const [key = "", holds = "", rev = ""] = rest;
      expect((await getValue(tree, key)).value).toEqual(str(holds));
      const dir = key.slice(0, key.lastIndexOf("/") + 1);
      logs.set(dir, Math.max(logs.get(dir) ?? -1, Number(key.slice(dir.length))));
      maxRev = Math.max(maxRev, Number(rev));
    } else if (what === "txn") {
      const [a = "", b = "", i = "", rev = ""] = rest;
      expect((await getValue(tree, a)).value).toEqual(int64(BigInt(i)));
      expect((await getValue(tree, b)).modRev).toBe(Number(rev));
      maxRev = Math.max(maxRev, Number(rev));
    } else {
      throw new Error(`unexpected report: ${report}`);
    }
  }
  // Appends are dense: no number below the highest reported one is missing.
  for (const [dir, highest] of logs) {
    const names = (await listAll(tree, dir)).map((c) => Number(c.name));
    expect(names.slice(0, highest + 1)).toEqual(Array.from({ length: highest + 1 }, (_v, i) => i));
  }
  expect(tree.revision()).toBeGreaterThanOrEqual(maxRev);
}

describe("tree on classic-level after a crash", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`npm run build\` first`);
    dir = await tempDir("byteseek-crash-");
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("keeps every write a SIGKILLed writer reported done, round after round", async () => {
    const rounds: Array<[string, number]> = [
      ["never", 300],
      ["always", 120],
      ["never", 517],
      ["never", 41],
    ];
    const all: string[] = [];
    let lastRev = 0;
    for (const [round, [sync, lines]] of rounds.entries()) {
      const reports = await writeUntilKilled(dir.path, round, sync, lines);
      expect(reports.length).toBeGreaterThanOrEqual(lines);
      all.push(...reports);
      const tree = await openTree({ backend: "classic", location: dir.path });
      try {
        expect(tree.revision()).toBeGreaterThan(lastRev);
        lastRev = tree.revision();
        await checkReports(tree, all);
        // The reopened tree goes on from where it stopped.
        const res = await tree.set(`/crash/${round}/after`, str("after the crash"));
        expect(res.rev).toBe(lastRev + 1);
        lastRev = res.rev;
      } finally {
        await tree.close();
      }
    }
  });
});
