/**
 * The parts of a declaration that the catalogue's HTTP answer (`GET /v1/tools`, server/runtime-schemas.ts)
 * shows as they are. They depend on nothing but zod, so the web page's types can reach them
 * without pulling in the declaration's validator (ajv).
 */
import { z } from "zod";

/** How a tool runs; declaration.ts fails to type-check unless `ToolImpl` has exactly these kinds. */
export const IMPL_KINDS = ["builtin", "shell", "http", "llm", "mcp"] as const;

/** MCP's tool annotations: hints a host uses to decide how to present and confirm a call. */
export const ToolAnnotations = z
  .object({
    readOnlyHint: z.boolean().optional().describe("The tool changes nothing"),
    destructiveHint: z.boolean().optional().describe("The tool may overwrite or delete"),
    idempotentHint: z.boolean().optional().describe("Calling it twice with the same arguments does no more"),
    openWorldHint: z.boolean().optional().describe("The tool reaches beyond byteseek (network, commands)"),
  })
  .strict();
export type ToolAnnotations = z.infer<typeof ToolAnnotations>;
