/**
 * A catalogue of many tools for the tools page's tests: `count` declarations of every impl kind,
 * some a run's, some switched off or needing approval, as export lines for one `tree.import` batch.
 */
import type { ExportEntry } from "../../tree/types.js";
import type { Json } from "../../tree/value.js";

const TOPICS = ["invoices", "weather", "tickets", "deployments", "metrics", "contacts", "calendars"];

/** `bulk.t0000` … : kind by `i % 5` (shell, http, mcp on servers srv0–srv2, alias, llm), run `bulk` owns every 7th. */
export function bulkTools(count: number): ExportEntry[] {
  const out: ExportEntry[] = [];
  for (let i = 0; i < count; i++) {
    const name = `bulk.t${String(i).padStart(4, "0")}`;
    const topic = TOPICS[i % TOPICS.length] as string;
    const impl: { [k: string]: Json } =
      i % 5 === 0
        ? { kind: "shell", argv: ["echo", "{x}"] }
        : i % 5 === 1
          ? { kind: "http", url: "https://api.example.com/{x}", method: "GET" }
          : i % 5 === 2
            ? { kind: "mcp", server: `srv${i % 3}`, tool: `t${i}` }
            : i % 5 === 3
              ? { kind: "builtin", ref: "tree.get" }
              : { kind: "llm", prompt: "/byteseek/prompt/system" };
    const param = impl.kind === "builtin" ? "key" : "x";
    const params: Json = { type: "object", properties: { [param]: { type: "string" } } };
    out.push({
      key: `/byteseek/tools/${name}`,
      kind: "json",
      value: {
        name,
        description: `Bulk tool ${i}: lists the ${topic} of team ${i % 97}.`,
        snippet: `the ${topic} of team ${i % 97}`,
        params,
        impl,
        ...(i % 11 === 0 ? { enabled: false } : {}),
        ...(i % 13 === 0 ? { confirm: true } : {}),
      },
      ...(i % 7 === 0 ? { vid: "bulk" } : {}),
    });
  }
  return out;
}
