import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createShellTools } from "../../tools/shell/index.js";
import { failure, makeWorkspace, type TestWorkspace } from "../edit/workspace.js";
import { waitGone } from "../helpers/processes.js";

const [run] = createShellTools();
const shell = run!;

describe("shell.run", () => {
  let ws: TestWorkspace;
  beforeEach(async () => {
    ws = await makeWorkspace({ defaultTimeoutMs: 120_000 });
  });
  afterEach(() => ws.cleanup());

  it("runs bash -c in the workspace root and reports exit code 0", async () => {
    const r = await ws.call(shell, { command: "pwd; echo $((40 + 2))" });
    expect(r.text).toBe(`${ws.root}\n42\nExit code: 0`);
    expect(r.details).toMatchObject({ exitCode: 0, truncated: false });
  });

  it("interleaves stdout and stderr in the order written", async () => {
    const r = await ws.call(shell, { command: "echo out1; echo err1 >&2; echo out2; echo err2 >&2" });
    expect(r.text).toBe("out1\nerr1\nout2\nerr2\nExit code: 0");
  });

  it("says when there is no output", async () => {
    expect((await ws.call(shell, { command: "true" })).text).toBe("(no output)\nExit code: 0");
  });

  it("fails a non-zero exit with its output and code (kind runtime)", async () => {
    const e = await failure(ws.call(shell, { command: "echo broken >&2; exit 3" }), "exit_code", "runtime");
    expect(e.message).toBe("broken\nCommand exited with code 3.");
    expect(e.details.exitCode).toBe(3);
  });

  it("fails a death by signal", async () => {
    const e = await failure(ws.call(shell, { command: "kill -KILL $$" }), "killed", "runtime");
    expect(e.message).toContain("SIGKILL");
  });

  it("keeps the last 2000 lines, with a marker giving the line and byte counts of all of it", async () => {
    const r = await ws.call(shell, { command: "seq 1 5000" });
    const rows = r.text.split("\n");
    expect(rows[0]).toBe("3001");
    expect(rows[1999]).toBe("5000");
    const bytes = Array.from({ length: 5000 }, (_, i) => String(i + 1).length + 1).reduce((a, b) => a + b);
    expect(rows[2000]).toBe(
      `[Output truncated: showing the last 2000 of 5000 lines (${bytes} bytes in all).]`,
    );
    expect(r.details).toMatchObject({ bytes, truncated: true });
  });

  it("caps output at 50 KB", async () => {
    const r = await ws.call(shell, { command: "for i in $(seq 1 1000); do printf '%0100d\\n' $i; done" });
    const body = r.text.slice(0, r.text.indexOf("\n[Output truncated"));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(50 * 1024);
    expect(body.endsWith("1000")).toBe(true);
  });

  it("kills the whole process group on timeout", async () => {
    const pidFile = path.join(ws.root, "bg.pid");
    const e = await failure(
      ws.call(shell, { command: `sleep 30 & echo $! > ${pidFile}; echo started; wait`, timeout: 0.5 }),
      "timeout",
      "runtime",
    );
    expect(e.message).toContain("started");
    expect(e.message).toContain("timed out after 500 ms");
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(await waitGone(pid)).toBe(true);
  });

  it("takes the default timeout from the context", async () => {
    const short = await makeWorkspace({ defaultTimeoutMs: 300 });
    try {
      await failure(short.call(shell, { command: "sleep 20" }), "timeout");
    } finally {
      await short.cleanup();
    }
  });

  it("kills the whole process group on abort", async () => {
    const pidFile = path.join(ws.root, "bg.pid");
    const pending = ws.call(shell, { command: `sleep 30 & echo $! > ${pidFile}; wait` });
    for (let i = 0; i < 2000 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 10));
    ws.abort.abort();
    await failure(pending, "aborted", "runtime");
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(await waitGone(pid)).toBe(true);
  });
});
