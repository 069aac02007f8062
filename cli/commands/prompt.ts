import { defineCommand, writeJson, writeLine } from "../command.js";
import { CLI_VID } from "./call.js";

/**
 * `kvspace prompt [--vid V]` → exactly what the model would get on the next turn of run V: the
 * system text, a blank line, `# tools (N)`, then each tool schema as one JSON line
 * `{"name", "description", "parameters"}` (our dotted names; providers map them).
 */
export const promptCommand = defineCommand({
  name: "prompt",
  usage: "prompt [--vid V]",
  summary: "print the system prompt and tool schemas the model would get next",
  help: "-o json: {system, tools: [{name, description, parameters}]} on one line.",
  args: { min: 0, max: 0 },
  outputs: ["json"],
  flags: { vid: "value" },
  flagHelp: { vid: "the run whose prompt to print (default cli)" },
  async run({ flags }, { tools, stdout, signal, output }) {
    const vid = typeof flags.vid === "string" ? flags.vid : CLI_VID;
    const built = await (await tools()).prompt(vid, signal);
    if (output === "json") {
      await writeJson(stdout, { system: built.system, tools: built.tools });
      return 0;
    }
    await writeLine(stdout, built.system);
    await writeLine(stdout, "");
    await writeLine(stdout, `# tools (${built.tools.length})`);
    for (const t of built.tools) await writeLine(stdout, JSON.stringify(t));
    return 0;
  },
});
