/**
 * Every command line of the README's blocks marked `<!-- readme-test: runs -->` runs as printed,
 * in order, in one shell, as a newcomer would run them: in a folder laid out like a fresh clone
 * (the checkout's `bin/` and README.md; the store the default ./data, seeded on first open), with
 * no store settings in the environment. A line whose comment says "until Ctrl-C" is stopped once it
 * printed something, the way Ctrl-C stops it (exit 0 expected). The test fails naming the first line that
 * does not run.
 */
import { spawn } from "node:child_process";
import { copyFile, readdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, tempDirs } from "./cli-server.js";
import { assertBuilt } from "./run-cli.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const MARK = "<!-- readme-test: runs -->";
const temps = tempDirs("kvspace-readme-");
afterAll(() => temps.removeAll());

/** The command lines of the marked ```sh blocks, in README order. */
function readmeCommands(readme: string): string[] {
  const lines: string[] = [];
  const parts = readme.split(MARK).slice(1);
  for (const part of parts) {
    const m = /^\s*```sh\n([\s\S]*?)\n```/.exec(part);
    if (!m) throw new Error(`a ${MARK} mark is not followed by a \`\`\`sh block`);
    for (const line of (m[1] as string).split("\n")) if (line.trim() !== "") lines.push(line);
  }
  return lines;
}

/**
 * One bash script: each line as printed (on a line of its own, so its comment stays a comment),
 * its output kept in $OUT.<n>, stopping at the first that fails and naming it.
 */
function script(lines: readonly string[]): string {
  const out = ["set -u"];
  for (const [i, line] of lines.entries()) {
    const quoted = `'${line.replaceAll("'", "'\\''")}'`;
    if (/until Ctrl-C/.test(line)) {
      // as a person's Ctrl-C: the command stops, exit 0 (SIGTERM, which kvspace treats the same,
      // since a background job of a non-interactive shell ignores SIGINT; sent to the command,
      // not to the subshell around it)
      out.push(
        "(",
        line,
        `) > "$OUT.${i}" & pid=$!`,
        `for _ in $(seq 600); do test -s "$OUT.${i}" && break; sleep 0.1; done`,
        'pkill -TERM -P "$pid" || kill -TERM "$pid"',
      );
      out.push(`wait "$pid" || { echo "README line failed: "${quoted} >&2; exit 1; }`);
      out.push(`test -s "$OUT.${i}" || { echo "README line printed nothing: "${quoted} >&2; exit 1; }`);
    } else out.push("{", line, `} > "$OUT.${i}" || { echo "README line failed: "${quoted} >&2; exit 1; }`);
    out.push(`echo "ran: "${quoted} >&2`);
  }
  return `${out.join("\n")}\n`;
}

describe("the README's commands", () => {
  let clone = "";
  let lines: string[] = [];
  beforeAll(async () => {
    assertBuilt();
    clone = await temps.make();
    await symlink(join(REPO, "bin"), join(clone, "bin"));
    await copyFile(join(REPO, "README.md"), join(clone, "README.md"));
    lines = readmeCommands(await readFile(join(REPO, "README.md"), "utf8"));
  });

  it("marks the tour, which starts by putting kvspace and byteseek on PATH", () => {
    expect(lines.length).toBeGreaterThan(15);
    expect(lines[0]).toMatch(/^export PATH="\$PWD\/bin:\$PATH"/);
    expect(lines.filter((l) => /^kvspace (clear|deltree)/.test(l)).every((l) => lines.indexOf(l) > 15)).toBe(
      true,
    );
  });

  it("runs every marked line as printed, in order, on a fresh clone's default store", async () => {
    const { KVSPACE: _store, ...env } = cliEnv("unused");
    // a TMPDIR of its own: the tour's export file must not meet another run's
    const tmp = await temps.make();
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn("bash", ["-c", script(lines)], {
        cwd: clone,
        env: { ...env, OUT: join(clone, "out"), TMPDIR: tmp },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(result.stderr.split("\n").filter((l) => l.startsWith("README line"))).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/ran: kvspace clear --yes .*\n$/);
    // what the tour says its first command shows, it shows
    expect(await readFile(join(clone, "out.1"), "utf8")).toMatch(
      /^\/byteseek\/\n├── policy\t.*\n├── prompt\/\t\(\d+\)\n└── tools\/\t\(\d+\)\n$/,
    );
    // the tour leaves nothing behind in the clone but the store and what this test wrote (no export file)
    expect((await readdir(clone)).filter((f) => !/^out(\.\d+)?$/.test(f)).sort()).toEqual([
      "README.md",
      "bin",
      "data",
    ]);
    const today = lines.findIndex((l) => l.startsWith("kvspace get /notes/today"));
    expect(await readFile(join(clone, `out.${today}`), "utf8")).toBe("/notes/today\tchar/utf8:hello world\n");
  }, 120_000);
});
