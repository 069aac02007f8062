import { capText, IMPL_OUTPUT_BYTES } from "../call/cap.js";
import { ToolError } from "../errors.js";
import type { ToolOutput } from "../types.js";

/** The part of an MCP `CallToolResult` byteseek reads. */
export interface UpstreamResult {
  content?: ReadonlyArray<Record<string, unknown>>;
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * An upstream result as the model gets it: text content passed through (under byteseek's cap),
 * other content summarized by type and size; structured content as JSON when nothing else came.
 * `isError` becomes a failure (kind runtime) carrying the upstream's text.
 */
export function mapResult(server: string, tool: string, result: UpstreamResult): ToolOutput {
  const parts: string[] = [];
  const kinds: string[] = [];
  for (const item of result.content ?? []) {
    const type = typeof item.type === "string" ? item.type : "unknown";
    kinds.push(type);
    parts.push(describe(type, item));
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const capped = capText(parts.join("\n"), IMPL_OUTPUT_BYTES);
  const details = {
    server,
    tool,
    content: kinds,
    ...(capped.truncated ? { truncated: true } : {}),
    ...(result.structuredContent !== undefined ? { structured: true } : {}),
  };
  if (result.isError)
    throw new ToolError(
      "mcp_error",
      `${tool} on the MCP server "${server}" reported an error: ${capped.text || "(no message)"}`,
      { details },
    );
  return { text: capped.text || "(empty result)", details };
}

function describe(type: string, item: Record<string, unknown>): string {
  switch (type) {
    case "text":
      return String(item.text ?? "");
    case "image":
    case "audio":
      return `[${type}: ${String(item.mimeType ?? "unknown type")}, ${base64Bytes(item.data)} bytes]`;
    case "resource_link":
      return `[resource link: ${String(item.uri ?? "")}${item.name ? ` (${String(item.name)})` : ""}${item.mimeType ? `, ${String(item.mimeType)}` : ""}]`;
    case "resource": {
      const r = (item.resource ?? {}) as Record<string, unknown>;
      const size = typeof r.text === "string" ? Buffer.byteLength(r.text) : base64Bytes(r.blob);
      return `[resource: ${String(r.uri ?? "")}${r.mimeType ? `, ${String(r.mimeType)}` : ""}, ${size} bytes]`;
    }
    default:
      return `[${type} content]`;
  }
}

function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - pad;
}
