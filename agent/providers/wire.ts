import { z } from "zod";
import { AgentError } from "../errors.js";

/** Helpers both wire formats use. */

/** Parses and checks one JSON document of the wire format, or fails with LLM_BAD_RESPONSE. */
export function parse<T>(schema: z.ZodType<T>, text: string, endpoint: string): T {
  return check(schema, parseJson(text, endpoint), endpoint);
}

export function parseJson(text: string, endpoint: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AgentError(
      "LLM_BAD_RESPONSE",
      `${endpoint} sent something that is not JSON: ${JSON.stringify(text.slice(0, 200))}`,
      {},
      err,
    );
  }
}

export function check<T>(schema: z.ZodType<T>, json: unknown, endpoint: string): T {
  const checked = schema.safeParse(json);
  if (!checked.success)
    throw new AgentError(
      "LLM_BAD_RESPONSE",
      `${endpoint} sent JSON of an unexpected shape: ${z.prettifyError(checked.error).slice(0, 300)}`,
    );
  return checked.data;
}

/** Reads a whole body; a clean end right after the first bytes is fine, a cut is LLM_STREAM_CUT (from the transport). */
export async function collect(chunks: AsyncIterable<Uint8Array>, endpoint: string): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(Buffer.from(chunk));
  if (parts.length === 0) throw new AgentError("LLM_BAD_RESPONSE", `${endpoint} answered an empty body`);
  return Buffer.concat(parts).toString("utf8");
}
