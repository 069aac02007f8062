import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import { ToolError } from "../errors.js";
import type { BuiltinTool } from "../types.js";
import type { ToolSearcher } from "./searcher.js";

const SearchArgs = z
  .object({
    query: z
      .string()
      .min(1)
      .max(500)
      .describe("What the tool should do, in a few words (any language), or part of its name"),
    limit: z.number().int().min(1).max(25).optional().describe("At most this many tools (default 8)"),
  })
  .strict();

/**
 * `tools.search`: finds tools of the catalogue that the tool list does not show in full. A tool it
 * answers is offered with its whole schema from the model's next step of the same turn.
 * `searcher` is bound late: the runtime the searcher reads the catalogue through is built after
 * the built-ins it runs.
 */
export function createToolSearchTool(searcher: () => ToolSearcher | undefined): BuiltinTool {
  return defineBuiltin({
    name: "tools.search",
    description:
      "Search byteseek's tool catalogue by what a tool does. Answers the best matching tools, one a line: name, score and what it does. A tool found here can be called from your next step on, with its full parameters.",
    snippet: "find a tool by what it does, when the tool you need is not in your list",
    guidelines: [
      "When no listed tool fits the task, call tools.search with what the tool should do before giving up or writing a new tool.",
    ],
    schema: SearchArgs,
    sequential: false,
    powers: [],
    async execute({ query, limit }, ctx) {
      const s = searcher();
      if (!s)
        throw new ToolError(
          "failed",
          "tool search is not available in this process; list tools with tree.list /byteseek/tools/",
        );
      const hits = await s.search(query, { vid: ctx.vid, limit: limit ?? 8 });
      if (hits.length === 0)
        return {
          text: `No tool matches "${query}". Try other words (what the tool does, not how), or list them with tree.list /byteseek/tools/.`,
          details: { query, names: [] },
        };
      const lines = hits.map((h) => `- ${h.name} (${h.score.toFixed(2)}): ${h.snippet}`);
      return {
        text: `${hits.length} tool${hits.length === 1 ? "" : "s"} for "${query}", best first; each can be called from your next step:\n${lines.join("\n")}`,
        details: { query, names: hits.map((h) => h.name), hits },
      };
    },
  });
}
