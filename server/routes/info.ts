/**
 * `GET /v1/info`: where this server's file tools work (its workspace), so a person sees it before a
 * first `edit.read` answers "does not exist": the page's header, `byteseek run` through a server;
 * whether its commands run sandboxed (the page's banner when they do not); and the models a turn
 * may name (the chat's model picker).
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { ModelChoices } from "../../agent/model-choices.js";
import type { Runtime } from "../../tools/runtime.js";
import { ErrorJson } from "../../tree/http/index.js";
import type { RouteDoc } from "../openapi.js";

export interface InfoRoutesOptions {
  /** Absent on a server of the tree alone: then there is no workspace and no command to sandbox. */
  runtime?: Runtime;
  /** The models a turn may name (the page's model picker); absent on a server without an agent. */
  models?: () => Promise<ModelChoices>;
}

export const InfoJson = z.object({
  workspace: z
    .string()
    .optional()
    .describe(
      "The folder the file tools work in (real path): a relative path in a call is relative to it; absent on a server of the tree alone",
    ),
  sandbox: z
    .object({
      state: z
        .enum(["on", "off", "unavailable"])
        .describe(
          'on: commands run in the kernel sandbox; off: the policy says "sandbox": "off" (they run as the server\'s user); unavailable: bubblewrap cannot run here (every command is refused)',
        ),
      caps: z
        .object({
          memory: z
            .boolean()
            .describe(
              "limits.residentBytes binds (a memory cgroup per command); false: only limits.memoryBytes, per process",
            ),
          processes: z
            .boolean()
            .describe(
              "limits.processes binds by a pids cgroup (a server running as root too); false: RLIMIT_NPROC",
            ),
          totalMemory: z
            .boolean()
            .describe(
              "limits.totalResidentBytes binds: every command's memory cgroup is made in one of the server's, capping all commands together; false: each command is capped alone",
            ),
          totalMemoryDefault: z
            .number()
            .int()
            .optional()
            .describe(
              "Where totalMemory binds, its cap when the policy names none: half the memory the server may use (the machine's, or its own cgroup's limit when lower)",
            ),
        })
        .optional()
        .describe("When on: which limits the server's cgroups hold beyond the RLIMITs"),
      warning: z
        .string()
        .optional()
        .describe(
          "What off or unavailable means, and how to turn the sandbox on; when on, that a command's memory is not capped as a whole here, or all commands' not together",
        ),
    })
    .optional()
    .describe(
      "Whether commands run sandboxed (the page shows a banner unless on); absent without a tool runtime",
    ),
  llm: ModelChoices.optional().describe(
    "The model a turn runs with and the others it may name (`llm.model` of a turn); absent without an agent",
  ),
});

const doc = {
  responses: {
    200: {
      examples: {
        info: {
          workspace: "/home/me/project/workspace",
          sandbox: {
            state: "on",
            caps: { memory: true, processes: true, totalMemory: true, totalMemoryDefault: 12884901888 },
          },
          llm: { configured: true, api: "openai", model: "gpt-4.1", models: ["gpt-4.1", "gpt-4.1-mini"] },
        },
      },
    },
  },
} satisfies RouteDoc;

export const infoRoutes: FastifyPluginAsyncZod<InfoRoutesOptions> = async function infoRoutes(
  app,
  { runtime, models },
) {
  app.get(
    "/v1/info",
    {
      schema: {
        summary: "Where this server's file tools work (its workspace)",
        doc,
        response: { 200: InfoJson, 401: ErrorJson },
      },
    },
    async function info() {
      const llm = models ? { llm: await models() } : {};
      if (!runtime) return llm;
      return { workspace: runtime.workspace, sandbox: await runtime.sandboxState(), ...llm };
    },
  );
};
