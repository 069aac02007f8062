/**
 * The MCP client's figure (issue 18): server-everything's `echo` (a no-op upstream tool) called
 * through byteseek — `runtime.call("everything.echo")`: validate, gate, the `mcp` impl over stdio,
 * record, usage — beside the same tool called directly with the official client
 * (`@modelcontextprotocol/client` over stdio, its own server-everything process), in the same run,
 * in rounds taking both back to back. The figure is byteseek's added median latency: per round the
 * median through byteseek minus the median direct, then the median of the rounds; the bar is ≤ 1 ms.
 * Run: npm run build && node dist/bench/mcp-client.js [--quick] [--rounds N]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { pino } from "pino";
import { createByteseek } from "../compose/byteseek.js";
import { keys } from "../shared/keys.js";
import { openTree } from "../tree/index.js";
import { json } from "../tree/value.js";
import { median, percentile, printTable } from "./report.js";

const fmt = (ms: number): string => ms.toFixed(3);

const quick = process.argv.includes("--quick");
const roundsArg = process.argv.indexOf("--rounds");
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : quick ? 2 : 5;
const CALLS = quick ? 200 : 2000;
const WARMUP = quick ? 50 : 300;
const BAR_MS = 1;

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);

async function timed(call: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await call();
  const lat: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const s = performance.now();
    await call();
    lat.push(performance.now() - s);
  }
  return lat;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-mcpc-"));
  const tree = await openTree({ backend: "classic", location: join(dir, "db") });
  const bs = await createByteseek({
    tree,
    workspace: dir,
    logger: pino({ level: "silent" }),
    env: process.env,
    sweep: false,
  });
  await tree.set(
    keys.mcpServer("everything"),
    json({ command: [process.execPath, EVERYTHING, "stdio"], idleStopMs: 0 }),
  );
  const [report] = await bs.mcp.sync("everything");
  if (!report?.ok) throw new Error(`sync failed: ${report?.error}`);

  const direct = new Client({ name: "bench", version: "1" });
  await direct.connect(
    new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "ignore" }),
  );
  // as byteseek's sync does on its connection
  await direct.listTools();

  const viaByteseek = async () => {
    const r = await bs.runtime.call("everything.echo", { message: "ping" }, { vid: "bench" });
    if (r.kind !== "ok") throw new Error(r.text);
  };
  const viaClient = async () => {
    const r = (await direct.callTool({ name: "echo", arguments: { message: "ping" } })) as {
      isError?: boolean;
    };
    if (r.isError) throw new Error("echo failed");
  };

  const ours: number[][] = [];
  const theirs: number[][] = [];
  const added: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // alternate who goes first: the machine's drift weighs on both
    const [a, b] = round % 2 === 0 ? [viaByteseek, viaClient] : [viaClient, viaByteseek];
    const first = await timed(a);
    const second = await timed(b);
    const [o, t] = round % 2 === 0 ? [first, second] : [second, first];
    ours.push(o);
    theirs.push(t);
    added.push(median(o) - median(t));
    await bs.runtime.flush();
  }
  const all = (xs: number[][]) => xs.flat();
  printTable(
    ["contender", "median ms", "p99 ms", "calls"],
    [
      [
        "everything.echo through byteseek (runtime.call)",
        fmt(median(all(ours))),
        fmt(percentile(all(ours), 99)),
        String(all(ours).length),
      ],
      [
        "echo with the official client (direct)",
        fmt(median(all(theirs))),
        fmt(percentile(all(theirs), 99)),
        String(all(theirs).length),
      ],
    ],
  );
  const figure = median(added);
  console.log(
    `\nbyteseek's added median latency: ${fmt(figure)} ms (median of ${ROUNDS} rounds: ${added.map(fmt).join(", ")}); bar ≤ ${BAR_MS} ms: ${figure <= BAR_MS ? "met" : "NOT met"}`,
  );
  await direct.close();
  await bs.runtime.flush();
  await bs.close();
  await tree.close();
  await rm(dir, { recursive: true, force: true });
}

await main();
