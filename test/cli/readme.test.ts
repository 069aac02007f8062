/**
 * Every command line of the README's blocks marked `<!-- readme-test: runs -->` runs as printed,
 * in order, in one shell, as a newcomer would run them: in a folder laid out like a fresh clone
 * (the checkout's `bin/` and README.md; the store the default ./data, seeded on first open), with
 * no store settings in the environment. A line whose comment says "until Ctrl-C" is stopped once it
 * printed something, the way Ctrl-C stops it (exit 0 expected). The test fails naming the first line that
 * does not run.
 *
 * The MCP section's host configurations (Claude Code, Codex, Cursor, VS Code) are read as those
 * hosts read them (readme-hosts.ts) and what they name is started as the host would — a real
 * `byteseek mcp` child speaking MCP over stdio, or the server's /mcp over HTTP — with no server
 * running and with a `byteseek serve` (as `npm start` runs it) on the same folder.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import pino from "pino";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../server/main.js";
import { freePort } from "../server/helpers.js";
import { cliEnv, tempDirs } from "./cli-server.js";
import { type Filling, fill, fillAll, HOSTS, type HostConfig, readmeHostConfigs } from "./readme-hosts.js";
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

describe("the README's MCP host configurations, as printed", () => {
  let project = "";
  let configs: HostConfig[] = [];
  /** A host's environment: this one's without byteseek settings, the checkout's bin/ on PATH. */
  let base: Record<string, string> = {};
  beforeAll(async () => {
    assertBuilt();
    project = await temps.make();
    await symlink(join(REPO, "bin"), join(project, "bin"));
    // the file a session reads: one in the project (its own workspace), one in the server's ./workspace
    await writeFile(join(project, "notes.txt"), "the project's own notes\n");
    await mkdir(join(project, "workspace"));
    await writeFile(join(project, "workspace", "notes.txt"), "the server's workspace notes\n");
    configs = readmeHostConfigs(await readFile(join(REPO, "README.md"), "utf8"));
    const { KVSPACE: _store, ...env } = cliEnv("unused");
    base = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
    base.PATH = `${join(project, "bin")}:${process.env.PATH ?? ""}`;
  });

  it("prints a stdio and an HTTP configuration for each of Claude Code, Codex, Cursor and VS Code", () => {
    expect(configs.map((c) => `${c.host} ${c.transport}`)).toEqual(
      HOSTS.flatMap((h) => [`${h} stdio`, `${h} http`]),
    );
    for (const c of configs)
      if (c.transport === "stdio") expect([c.command, ...c.args]).toEqual(["byteseek", "mcp"]);
    expect(configs.find((c) => c.host === "Codex" && c.transport === "stdio")).toMatchObject({
      env: { KVSPACE: "http://127.0.0.1:7411" },
    });
  });

  /** initialize, tools/list, one tools/call (edit_read notes.txt): its text, and what the process said on stderr. */
  async function session(c: Extract<HostConfig, { transport: "stdio" }>, f: Filling) {
    const transport = new StdioClientTransport({
      command: c.command,
      args: c.args,
      env: { ...base, ...fillAll(c.env, f) },
      // a host starts the server in the project's folder
      cwd: project,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const client = new Client({ name: `readme-${c.host}`, version: "1.0.0" });
    try {
      await client.connect(transport);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names, c.host).toContain("edit_read");
      const read = await client.callTool({ name: "edit_read", arguments: { path: "notes.txt" } });
      expect(read.isError, `${c.host}: ${JSON.stringify(read)}`).toBe(false);
      // a relay writes its note as it attaches: read stderr once the process has ended
      await client.close();
      return { text: (read.content as Array<{ text?: string }>)[0]?.text ?? "", stderr: () => stderr };
    } finally {
      await client.close();
    }
  }

  it("works without a server: each stdio line's byteseek mcp holds the project's store; Codex's, which names a server, says to start it", async () => {
    const port = await freePort();
    const f: Filling = { project, token: "unused", hostPort: `127.0.0.1:${port}` };
    for (const c of configs) {
      if (c.transport !== "stdio") continue;
      if (fill(c.env.KVSPACE ?? "", f).startsWith("http")) {
        const refused = await exitOf(c, f);
        expect(refused.code, c.host).toBe(1);
        expect(refused.stderr).toContain(`cannot reach the byteseek server at http://127.0.0.1:${port}/`);
        expect(refused.stderr).toContain("start it (byteseek serve, or npm start in its checkout)");
        continue;
      }
      const { text } = await session(c, f);
      expect(text, c.host).toContain("the project's own notes");
    }
  }, 120_000);

  describe("with byteseek serve running on the same folder, as npm start runs it", () => {
    let server: RunningServer;
    beforeAll(async () => {
      // npm start: byteseek serve in the checkout, store ./data, workspace ./workspace
      server = await startServer({
        cwd: project,
        env: { ...base, BYTESEEK_PORT: "0" },
        logger: pino({ level: "silent" }),
        handleSignals: false,
      });
    }, 60_000);
    afterAll(() => server?.close(), 60_000);
    const filling = (): Filling => ({
      project,
      token: server.token ?? "",
      hostPort: new URL(server.url).host,
    });

    it("serves each stdio line through the server, in its workspace, saying so on stderr when the line names another", async () => {
      // the hosts' sessions at once, as a person with several hosts open has them
      const stdio = configs.filter(
        (c): c is Extract<HostConfig, { transport: "stdio" }> => c.transport === "stdio",
      );
      const sessions = await Promise.all(stdio.map((c) => session(c, filling())));
      for (const [i, c] of stdio.entries()) {
        const { text, stderr } = sessions[i] as Awaited<ReturnType<typeof session>>;
        expect(text, c.host).toContain("the server's workspace notes");
        if (c.host === "Codex") continue; // KVSPACE names the server itself: nothing is deferred
        expect(stderr(), c.host).toContain(
          `is held by a byteseek serve whose workspace is ${join(project, "workspace")}: this session's file tools work there, not in ${project}`,
        );
      }
    }, 120_000);

    it("answers each HTTP configuration at /mcp with the token the README says to send", async () => {
      for (const c of configs) {
        if (c.transport !== "http") continue;
        const f = filling();
        // a connection pool of its own, closed after: a kept-alive connection would hold the server's close
        const pool = new Agent();
        const transport = new StreamableHTTPClientTransport(new URL(fill(c.url, f)), {
          requestInit: { headers: fillAll(c.headers, f) },
          // Node's fetch takes undici's dispatcher; its types are another copy of undici's
          fetch: (url, init) => fetch(url, { ...init, dispatcher: pool } as unknown as RequestInit),
        });
        const client = new Client({ name: `readme-${c.host}-http`, version: "1.0.0" });
        try {
          await client.connect(transport);
          expect((await client.listTools()).tools.map((t) => t.name)).toContain("edit_read");
          const read = await client.callTool({ name: "edit_read", arguments: { path: "notes.txt" } });
          expect((read.content as Array<{ text?: string }>)[0]?.text, c.host).toContain(
            "the server's workspace notes",
          );
        } finally {
          await client.close();
          await pool.close();
        }
      }
    });
  });

  /** Runs a stdio configuration that is expected to refuse at start: its exit code and stderr. */
  function exitOf(c: Extract<HostConfig, { transport: "stdio" }>, f: Filling) {
    return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(c.command, c.args, {
        cwd: project,
        env: { ...base, ...fillAll(c.env, f) },
        stdio: ["pipe", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });
  }
});
