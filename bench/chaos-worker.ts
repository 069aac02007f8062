/**
 * The process the durability benches kill (bench/chaos.ts) or time (bench/resume.ts): it opens the
 * store, says `ready` on stdout, and drives the runs it is given — each resumed where its last
 * process died, or started when it has no messages yet — killing itself where BYTESEEK_KILL_AT says
 * (between a call's intent and its effect, or its effect and its record); its parent may kill it
 * at any moment too. What it saw goes to the stats file in synchronous writes, so a SIGKILL loses
 * nothing already said. It imports only what driving a run needs (the agent loop, the runtime, the
 * edit and tree built-ins) and seeds the store as every entry point does: its start is most of
 * what a kill costs.
 *
 * Run by the benches: node dist/bench/chaos-worker.js <paths json> <vids json> [together|sequential]
 * `together` (the default): the first run alone until its calls are settled, then all the others at
 * once (as a server resumes them); `sequential`: one after another, each resume timed.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import type { AgentEvent } from "../agent/events.js";
import { killAt } from "../agent/kill-at.js";
import { createAgent } from "../agent/loop.js";
import { seedPrompts } from "../prompts/defaults.js";
import { seedTools } from "../tools/catalogue/seed.js";
import { createRuntime } from "../tools/runtime.js";
import { openTree } from "../tree/index.js";
import { benchBuiltins, type Paths, type Said, scriptedModel } from "./chaos-plan.js";

async function worker(paths: Paths, vids: string[], mode: string): Promise<void> {
  const logger = pino({ level: "silent" });
  const tree = await openTree({ backend: "classic", location: paths.db });
  // as every entry point does on open (compose/byteseek.ts seedStore): the shipped declarations
  // checked, which also compiles the JSON Schema meta-schema once — a cost of the start, not of a resume
  const builtins = benchBuiltins(paths.marks);
  await seedTools({ tree, builtins, logger });
  await seedPrompts(tree);
  const failpoint = killAt(process.env.BYTESEEK_KILL_AT);
  const runtime = createRuntime({
    tree,
    builtins,
    logger,
    workspace: paths.ws,
    ...(failpoint ? { failpoint } : {}),
  });
  const agent = createAgent({ tree, runtime, logger, provider: async () => scriptedModel });
  const out = openSync(paths.stats, "a");
  const say = (o: Said) => writeSync(out, `${JSON.stringify(o)}\n`);
  writeSync(1, "ready\n");
  let first = true;

  /** Resumes (or starts) one run; `settled` is told when its interrupted calls are settled (its next step, or its end). */
  async function drive(vid: string, settled: () => void): Promise<void> {
    const isFirst = first;
    first = false;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let timed = false;
    const settledCalls: string[] = [];
    const onEvent = (e: AgentEvent) => {
      if (!timed && e.type === "tool_start") settledCalls.push(e.name);
      if (timed || (e.type !== "step" && e.type !== "turn_end")) return;
      timed = true;
      const c = process.cpuUsage(c0);
      const cpuMs = (c.user + c.system) / 1000;
      say({ vid, resumeMs: performance.now() - t0, cpuMs, first: isFirst, calls: settledCalls });
      settled();
    };
    try {
      const r = await agent.resumeRun({ vid, onEvent });
      say({ vid, end: r.reason });
    } catch (err) {
      settled();
      const code = (err as { code?: string }).code;
      if (code === "AGENT_NOT_INTERRUPTED") return void say({ vid, end: "done" });
      if (code !== "AGENT_RUN_NOT_FOUND") throw err;
      const r = await agent.runTurn({ vid, input: vid });
      say({ vid, end: r.reason });
    }
  }

  if (mode === "sequential") for (const vid of vids) await drive(vid, () => {});
  else {
    const [head, ...rest] = vids;
    const runs: Array<Promise<void>> = [];
    if (head !== undefined) await new Promise<void>((settled) => runs.push(drive(head, settled)));
    runs.push(...rest.map((vid) => drive(vid, () => {})));
    await Promise.all(runs);
  }
  closeSync(out);
  await runtime.close();
  await tree.close();
}

await worker(
  JSON.parse(process.argv[2] as string) as Paths,
  JSON.parse(process.argv[3] ?? "[]") as string[],
  process.argv[4] ?? "together",
);
