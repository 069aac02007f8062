import type { ApprovalScope } from "../../tools/approvals.js";
import { type CommandSpec, defineCommand, writeLine } from "../command.js";
import { usageError } from "../errors.js";

const SCOPES: readonly string[] = ["once", "run", "always"];

/**
 * `kvspace approve <vid>/<n> [--scope once|run|always] [--reason …]` and `kvspace deny <vid>/<n>
 * [--reason …]`: a person's decision on a call waiting at /byteseek/approval/<vid>/<n>, embedded
 * or over HTTP. Prints `<key>\t<state>\t<tool>`.
 */
function decisionCommand(decision: "approve" | "deny"): CommandSpec {
  const usage =
    decision === "approve"
      ? "approve <vid>/<n> [--scope once|run|always] [--reason R]"
      : "deny <vid>/<n> [--reason R]";
  return defineCommand({
    name: decision,
    usage,
    summary:
      decision === "approve"
        ? "approve a call waiting at /byteseek/approval/<vid>/<n>"
        : "deny a call waiting at /byteseek/approval/<vid>/<n>",
    args: { min: 1, max: 1 },
    flags: decision === "approve" ? { scope: "value", reason: "value" } : { reason: "value" },
    flagHelp: {
      scope: "once (this call), run (the tool for the rest of the run) or always (added to policy.approved)",
      reason: "a note kept with the decision",
    },
    async run({ positionals: [id], flags }, { tools, stdout, signal }) {
      const scope = flags.scope;
      if (scope !== undefined && (typeof scope !== "string" || !SCOPES.includes(scope)))
        throw usageError(usage, `--scope takes ${SCOPES.join(", ")}, got '${String(scope)}'`);
      const client = await tools();
      const { key, entry } = await client.decide(
        id as string,
        {
          decision,
          ...(typeof scope === "string" ? { scope: scope as ApprovalScope } : {}),
          ...(typeof flags.reason === "string" ? { reason: flags.reason } : {}),
        },
        signal,
      );
      await writeLine(stdout, `${key}\t${entry.state}\t${entry.tool}`);
      return 0;
    },
  });
}

export const approveCommand = decisionCommand("approve");
export const denyCommand = decisionCommand("deny");
