/**
 * `node dist/bench/run-start.js [--rounds N] [--against <other dist>]`: what a `byteseek run` costs
 * before it asks the model anything — node's start, the modules a run imports, opening and seeding
 * the store, composing the runtime and building the prompt. Each round starts a fresh
 * `byteseek run "hi"` on a seeded store (the first run, which seeds it, is not counted) against a
 * local model that answers "done", and reads the process's CPU time (/proc/<pid>/stat, 10 ms ticks)
 * when its first model request arrives; wall to that moment beside it. With --against, the
 * other build's CLI (another checkout's dist/, e.g. the commit before a change) runs in the same
 * rounds, alternating, so the two are compared under the same load.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, median, pairedRatio, printTable } from "./report.js";

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg("rounds") ?? 10);
const against = arg("against");
const builds = [
  { name: "this build", bin: fileURLToPath(new URL("../cli/byteseek.js", import.meta.url)) },
  ...(against ? [{ name: against, bin: resolve(against, "cli/byteseek.js") }] : []),
];

/** CPU ms (user + system) process `pid` has used so far. */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** An OpenAI chat-completions endpoint answering "done" (streamed when asked); tells `onRequest` first. */
async function startModel(onRequest: () => Promise<void>): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", async () => {
      await onRequest();
      const asked = JSON.parse(body || "{}") as { stream?: boolean; model?: string };
      const base = { id: "c1", created: 1, model: asked.model };
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      if (!asked.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        const message = { role: "assistant", content: "done" };
        res.end(JSON.stringify({ ...base, choices: [{ index: 0, message, finish_reason: "stop" }], usage }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (choices: unknown[], more = {}) =>
        `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...more })}\n\n`;
      res.write(chunk([{ index: 0, delta: { role: "assistant", content: "done" }, finish_reason: null }]));
      res.write(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
      res.write(chunk([], { usage }));
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-run-start-"));
let current: { pid: number; start: number; cpu?: number; wall?: number } | undefined;
const model = await startModel(async () => {
  if (!current || current.cpu !== undefined) return;
  current.wall = performance.now() - current.start;
  current.cpu = await cpuMs(current.pid);
});
try {
  await mkdir(join(dir, "ws"));
  /** One `byteseek run` with `bin` on its own seeded store: its CPU and wall at the first model request. */
  async function run(bin: string, store: string): Promise<{ cpu: number; wall: number }> {
    const child = spawn(process.execPath, [bin, "run", "hi"], {
      env: {
        PATH: process.env.PATH,
        KVSPACE: join(dir, store),
        BYTESEEK_WORKSPACE: join(dir, "ws"),
        BYTESEEK_LLM_API: "openai",
        BYTESEEK_LLM_URL: `${model.url}/v1`,
        BYTESEEK_LLM_MODEL: "bench",
        BYTESEEK_LLM_MAX_RETRIES: "0",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    current = { pid: child.pid as number, start: performance.now() };
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((done) => child.on("close", done));
    const seen = current;
    if (code !== 0 || seen.cpu === undefined || seen.wall === undefined)
      throw new Error(`byteseek run (${bin}) failed (${code}): ${stderr}`);
    return { cpu: seen.cpu, wall: seen.wall };
  }
  // each build its own store, seeded by a first run that is not counted
  for (const [i, b] of builds.entries()) await run(b.bin, `store-${i}`);
  const cpu = builds.map(() => [] as number[]);
  const wall = builds.map(() => [] as number[]);
  const load = [loadavg()[0] ?? 0];
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, b] of builds.entries()) {
      const r = await run(b.bin, `store-${i}`);
      cpu[i]?.push(r.cpu);
      wall[i]?.push(r.wall);
    }
  load.push(loadavg()[0] ?? 0);
  console.log(
    `${ROUNDS} rounds of byteseek run "hi" to its first model request, load average ${load.map((l) => l.toFixed(1)).join(" → ")}`,
  );
  printTable(
    ["build", "CPU ms p50", "CPU ms min", "wall ms p50", "CPU × this build (paired)"],
    builds.map((b, i) => [
      b.name,
      fmt(median(cpu[i] ?? [])),
      fmt(Math.min(...(cpu[i] ?? []))),
      fmt(median(wall[i] ?? [])),
      pairedRatio(cpu[i] ?? [], cpu[0] ?? []).toFixed(2),
    ]),
  );
} finally {
  await model.close();
  await rm(dir, { recursive: true, force: true });
}
