import { spawnSync } from "node:child_process";
import { constants } from "node:fs";
import { mkdir, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";
import { type ServerChild, startServerChild } from "./server-child.js";

const TOKEN = "stall-test-token";

/** Milliseconds a request takes, measured around a real HTTP request; it gives up after 5 s. */
async function timed(
  url: string,
  init: Parameters<typeof request>[1],
): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const res = await request(url, { ...init, signal: AbortSignal.timeout(5000) });
  await res.body.text();
  return { ms: performance.now() - t, status: res.statusCode };
}

/** CPU time (user + system, in clock ticks) the process used so far. */
async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[14 - 3]) + Number(f[15 - 3]);
}

describe("no tool call stalls the server (a real server child process)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let ws: string;
  let server: ServerChild;
  const auth = { authorization: `Bearer ${TOKEN}` };

  async function answersWithinASecond(): Promise<void> {
    const health = await timed(`${server.url}/healthz`, { method: "GET" });
    expect(health.status).toBe(200);
    expect(health.ms).toBeLessThan(1000);
    const put = await timed(`${server.url}/v1/tree/probe/value`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ at: Date.now() }),
    });
    expect(put.status).toBeLessThan(300);
    expect(put.ms).toBeLessThan(1000);
  }

  beforeAll(async () => {
    dir = await tempDir("byteseek-stall-");
    ws = join(dir.path, "ws");
    await mkdir(ws);
    server = await startServerChild({
      KVSPACE: join(dir.path, "store"),
      BYTESEEK_WORKSPACE: ws,
      BYTESEEK_TOKEN: TOKEN,
    });
    // edit.grep ships switched off: switch it on, with a short timeout
    const decl = (await server.json("GET", "/v1/tree/byteseek/tools/edit.grep")).body as {
      value: Record<string, unknown>;
    };
    const put = await server.json("PUT", "/v1/tree/byteseek/tools/edit.grep?force=1", {
      kind: "json",
      value: { ...decl.value, enabled: true, timeoutMs: 1500 },
    });
    expect(put.status).toBeLessThan(300);
  }, 30_000);

  afterAll(async () => {
    // readers stuck in open() of the FIFO (without the fix) are let go, so the server can stop
    const fh = await open(join(ws, "pipe"), constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
    await fh?.close();
    await server?.stop();
    await dir?.remove();
  });

  it("answers /healthz and a PUT within a second while (a+)+$ runs against a long line, and the timeout stops it", async () => {
    await writeFile(join(ws, "long.txt"), `${"a".repeat(40)}!\n`);
    const grep = server.call("edit.grep", { pattern: "(a+)+$", path: "long.txt" });
    await new Promise((r) => setTimeout(r, 300));
    await answersWithinASecond();
    const r = await grep;
    expect(r.kind).toBe("runtime");
    expect(r.details.code).toBe("timeout");
    expect(r.text).toContain("timed out after 1500 ms");
    // the worker running the pattern was terminated: the server is idle again
    const before = await cpuTicks(server.pid);
    await new Promise((res) => setTimeout(res, 1000));
    expect(await cpuTicks(server.pid)).toBeLessThan(before + 50);
  });

  it("answers /healthz and a PUT within a second while five edit.read calls target a FIFO, and refuses them", async () => {
    expect(spawnSync("mkfifo", [join(ws, "pipe")]).status).toBe(0);
    const reads = Array.from({ length: 5 }, () => server.call("edit.read", { path: "pipe" }));
    await new Promise((r) => setTimeout(r, 200));
    await answersWithinASecond();
    for (const r of await Promise.all(reads)) {
      expect(r.kind).toBe("runtime");
      expect(r.details.code).toBe("not_regular_file");
      expect(r.text).toContain("pipe is a FIFO (named pipe), not a regular file");
    }
  });
});
