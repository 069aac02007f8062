/**
 * What the durability benches (bench/chaos.ts, bench/resume.ts) share with the worker process they
 * kill (bench/chaos-worker.ts): each run's plan of calls, the scripted model that follows it, the
 * mark tool, and the store they all open. Kept light: the worker imports it on every start.
 */
import { appendFileSync } from "node:fs";
import type { ChatRequest, ChatResponse, Provider } from "../agent/providers/types.js";
import { createEditTools } from "../tools/edit/index.js";
import { createTreeTools } from "../tools/tree/tools.js";
import type { BuiltinTool } from "../tools/types.js";

/** The files a bench shares with its workers. */
export interface Paths {
  db: string;
  ws: string;
  marks: string;
  stats: string;
}

/** What a worker writes to the stats file, one JSON line each. */
export interface Said {
  vid: string;
  /** How the run's turn ended in that process (`done`: the run is finished). */
  end?: string;
  /** A resume: ms from resumeRun to its next model step (its interrupted calls settled), and the CPU ms it took. */
  resumeMs?: number;
  cpuMs?: number;
  /** The interrupted calls the resume settled (their tool names). */
  calls?: string[];
  /** The process's first resume (a fresh process: cold code, first reads of the store). */
  first?: boolean;
}

/** The mark: one line appended to a file per execution, declared with no intent (its outcome is unknown when interrupted). */
export function markTool(file: string): BuiltinTool {
  return {
    ref: "bench.mark",
    declaration: {
      name: "bench.mark",
      description: "appends a line to the marks file",
      snippet: "mark a line",
      params: { type: "object", properties: { line: { type: "string" } }, required: ["line"] },
      impl: { kind: "builtin", ref: "bench.mark" },
    },
    async execute(args) {
      appendFileSync(file, `${String(args.line)}\n`);
      return { text: "marked" };
    },
  };
}

/** The built-ins the runs call (edit.write, edit.replace, tree.set, bench.mark). */
export function benchBuiltins(marks: string): BuiltinTool[] {
  return [...createEditTools(), ...createTreeTools(), markTool(marks)];
}

/** The calls of a run, in order; then it answers. */
export function plan(vid: string): Array<{ name: string; args: Record<string, unknown> }> {
  const path = `${vid}.txt`;
  return [
    { name: "edit.write", args: { path, text: "one\n" } },
    { name: "bench.mark", args: { line: `${vid}/c1` } },
    { name: "count.add", args: { tag: `${vid}/c2` } },
    { name: "tree.set", args: { key: `/bench/${vid}/n`, value: 1 } },
    { name: "edit.replace", args: { path, old: "one", new: "two" } },
    { name: "tree.set", args: { key: `/bench/${vid}/n`, value: 2 } },
    { name: "count.add", args: { tag: `${vid}/c6` } },
    { name: "bench.mark", args: { line: `${vid}/c7` } },
  ];
}

/** The model: the next call of the run's plan (the user's message is the vid) by how many results it has seen, then the answer. */
export const scriptedModel: Provider = {
  api: "openai",
  model: "scripted",
  async complete(req: ChatRequest): Promise<ChatResponse> {
    const user = req.messages.find((m) => m.role === "user");
    const vid = user?.role === "user" ? user.content : "";
    const seen = req.messages.filter((m) => m.role === "tool").length;
    const next = plan(vid)[seen];
    const usage = { inputTokens: 100, outputTokens: 10 };
    return next
      ? {
          text: "",
          toolCalls: [{ id: `c${seen}`, name: next.name, argsText: JSON.stringify(next.args) }],
          stopReason: "tool_calls",
          usage,
        }
      : { text: "done", toolCalls: [], stopReason: "stop", usage };
  },
  async close() {},
};
