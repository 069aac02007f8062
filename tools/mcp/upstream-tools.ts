import type { DeclJson } from "./merge.js";
import type { McpServerEntry } from "./registry.js";
import { mapToolNames } from "./registry.js";

/** The part of an upstream `tools/list` item the sync reads. */
export interface UpstreamTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;
const MAX_DESCRIPTION = 8000;
const MAX_SNIPPET = 300;

/**
 * The declarations an upstream's tools become, by tree name: the upstream description, `params` =
 * its inputSchema (its `$schema` kept: arguments are validated in the dialect it names), its annotations
 * and title, a snippet (its description's first line) so the model's tool list offers it, the
 * entry's timeout, and `impl: {kind: "mcp", server, tool}` naming the upstream tool.
 */
export function upstreamDeclarations(
  server: string,
  entry: McpServerEntry,
  tools: readonly UpstreamTool[],
): Map<string, DeclJson> {
  const allowed = entry.tools ? new Set(entry.tools) : undefined;
  const kept = tools.filter((t) => allowed === undefined || allowed.has(t.name));
  const names = mapToolNames(
    server,
    kept.map((t) => t.name),
  );
  const out = new Map<string, DeclJson>();
  for (const tool of kept) {
    const name = names.get(tool.name) as string;
    const title =
      tool.title ?? (typeof tool.annotations?.title === "string" ? tool.annotations.title : undefined);
    const description = (tool.description?.trim() || title || `${tool.name} (MCP server ${server})`).slice(
      0,
      MAX_DESCRIPTION,
    );
    const schema = tool.inputSchema ?? {};
    const params = schema.type === "object" ? schema : { ...schema, type: "object" };
    const annotations: Record<string, boolean> = {};
    for (const h of HINTS)
      if (typeof tool.annotations?.[h] === "boolean") annotations[h] = tool.annotations[h] as boolean;
    const decl: DeclJson = {
      name,
      ...(title ? { title: title.slice(0, 200) } : {}),
      description,
      snippet: snippetOf(description),
      params,
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(entry.timeoutMs ? { timeoutMs: entry.timeoutMs } : {}),
      impl: { kind: "mcp", server, tool: tool.name },
    };
    out.set(name, decl);
  }
  return out;
}

function snippetOf(description: string): string {
  // any line break ends the line: a lone \r would make the snippet (one line) invalid
  const line = (description.split(/\r\n|[\r\n\u2028\u2029\u0085]/).find((l) => l.trim() !== "") ?? "").trim();
  return line.length <= MAX_SNIPPET ? line : `${line.slice(0, MAX_SNIPPET - 1)}…`;
}
