/**
 * The wire shape of the models a turn may name (agent/model-choices.ts, `GET /v1/info`), in a
 * module of zod alone so the web page can type its answers from it (web/src/wire.ts).
 */
import { z } from "zod";

export const ModelChoices = z.object({
  configured: z.boolean().describe("A model provider is set: a turn can run"),
  api: z.enum(["openai", "anthropic"]).optional().describe("The provider's API"),
  model: z.string().optional().describe("The model a turn uses when it names none"),
  models: z.array(z.string()).describe("The models a turn may name: the configured one first"),
  problem: z.string().optional().describe("Why no turn can run yet, and what to set"),
});
export type ModelChoices = z.infer<typeof ModelChoices>;
