import { POLICY_INVALID } from "../../tools/catalogue.js";
import { defineCommand, writeLine } from "../command.js";

/**
 * `kvspace tools` → the catalogue, one line per valid declaration:
 * `name<TAB>state<TAB>impl<TAB>snippet`, state `enabled`, `disabled` or `blocked` (the policy
 * denies every call; the reason follows the snippet), snippet `-` when there is none (not listed
 * in the prompt). `--check` → what does not validate instead: the policy's problems
 * (`/byteseek/policy<TAB>problem`: every call is denied), the invalid declarations'
 * (`name<TAB>problem`) — exit 3 when there is any — then the enabled tools the model is not
 * offered, and why.
 */
export const toolsCommand = defineCommand({
  name: "tools",
  usage: "tools [--check]",
  summary: "list the tool catalogue; --check: an invalid policy and declarations (exit 3 if any)",
  args: { min: 0, max: 0 },
  flags: { check: "bool" },
  flagHelp: { check: "list an invalid policy and invalid declarations instead (exit 3 if any)" },
  async run({ flags }, { tools, stdout, signal }) {
    const catalogue = await (await tools()).list(signal);
    if (flags.check === true) {
      const policy = catalogue.policy;
      if (policy) for (const problem of policy.problems) await writeLine(stdout, `${policy.key}\t${problem}`);
      for (const bad of catalogue.invalid)
        for (const problem of bad.problems) await writeLine(stdout, `${bad.name}\t${problem}`);
      // the prompt offers a tool only when it is enabled, has a snippet and is not blocked
      for (const t of catalogue.tools) {
        // an invalid policy blocks every tool: its own lines above say why, once
        if (!t.enabled || (policy && t.blocked === POLICY_INVALID)) continue;
        const why =
          t.blocked ?? (t.snippet === undefined ? "it has no snippet (still callable by name)" : undefined);
        if (why !== undefined) await writeLine(stdout, `${t.name}\tnot offered to the model: ${why}`);
      }
      return catalogue.invalid.length > 0 || policy ? 3 : 0;
    }
    for (const t of catalogue.tools) {
      const state = t.blocked !== undefined ? "blocked" : t.enabled ? "enabled" : "disabled";
      const cells = [t.name, state, t.impl, t.snippet ?? "-"];
      if (t.blocked !== undefined) cells.push(t.blocked);
      await writeLine(stdout, cells.join("\t"));
    }
    return 0;
  },
});
