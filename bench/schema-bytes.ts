/**
 * What a tool list costs per request: the bytes of its JSON as a model gets it (name, description,
 * parameters of each tool). pi's default file tools (read, write, edit) are the yardstick.
 */
import { pino } from "pino";
import { createByteseek } from "../compose/byteseek.js";
import { openTree } from "../tree/index.js";

/** pi's read, write and edit tools, as its default tool list sends them. */
export const PI_FILE_TOOL_BYTES = 2_764;

export interface SentTool {
  name: string;
  description: string;
  parameters: unknown;
}

/** Bytes of the tool list's JSON as sent: name, description and parameters of each. */
export function schemaBytes(tools: readonly SentTool[]): number {
  return Buffer.byteLength(
    JSON.stringify(
      tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    ),
  );
}

/** The file tools of a list: the edit family. */
export const isFileTool = (t: SentTool): boolean => t.name.startsWith("edit.");

/** The tool list a fresh store offers the model (the shipped declarations, the default policy). */
export async function defaultToolList(workspace: string): Promise<SentTool[]> {
  const tree = await openTree({ backend: "memory" });
  const bs = await createByteseek({ tree, workspace, logger: pino({ level: "silent" }), env: {} });
  try {
    return (await bs.prompt("schema-bytes", "")).tools;
  } finally {
    await bs.close();
    await tree.close();
  }
}
