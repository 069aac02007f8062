import type { ApprovalDecision, ApprovalScope } from "../../tools/gate/approvals.js";
import { type CommandSpec, defineCommand, writeJson, writeLine } from "../command.js";
import { usageError } from "../errors.js";

const SCOPES: readonly string[] = ["once", "run", "always"];

/**
 * `kvspace approve <vid>/<n> [--scope once|run|always] [--content JSON] [--reason …]` and
 * `kvspace deny <vid>/<n> [--cancel] [--reason …]`: a person's decision on a call waiting at
 * /byteseek/approval/<vid>/<n>, embedded or over HTTP — or their answer to an upstream MCP server's
 * question (accept with the form's content, decline, or cancel). Prints `<key>\t<state>\t<tool>`;
 * `-o json` the decided entry as POST /v1/approvals/<vid>/<n> answers, `{key, entry}`.
 */
function decisionCommand(decision: "approve" | "deny"): CommandSpec {
  const usage =
    decision === "approve"
      ? "approve <vid>/<n> [--scope once|run|always] [--content JSON] [--reason R]"
      : "deny <vid>/<n> [--cancel] [--reason R]";
  return defineCommand({
    name: decision,
    usage,
    summary:
      decision === "approve"
        ? "approve a call waiting at /byteseek/approval/<vid>/<n> (or accept an MCP server's question)"
        : "deny a call waiting at /byteseek/approval/<vid>/<n> (or decline an MCP server's question)",
    help: [
      "Prints <key><TAB><state><TAB><tool>, e.g. /byteseek/approval/run7/0<TAB>approved<TAB>fs.write.",
      "-o json: {key, entry} as POST /v1/approvals/<vid>/<n> answers (entry.decision says who, how and why).",
    ].join("\n"),
    args: { min: 1, max: 1 },
    outputs: ["json"],
    flags:
      decision === "approve"
        ? { scope: "value", reason: "value", content: "value" }
        : { reason: "value", cancel: "bool" },
    flagHelp: {
      scope: "once (this call), run (the tool for the rest of the run) or always (added to policy.approved)",
      reason: "a note kept with the decision",
      content:
        'an MCP server\'s question: the answer, a JSON object fitting its form (e.g. \'{"name": "Ada"}\')',
      cancel: "an MCP server's question: answer cancel (dismissed) instead of decline",
    },
    async run({ positionals: [id], flags }, { tools, stdout, signal, output = "text" }) {
      const scope = flags.scope;
      if (scope !== undefined && (typeof scope !== "string" || !SCOPES.includes(scope)))
        throw usageError(usage, `--scope takes ${SCOPES.join(", ")}, got '${String(scope)}'`);
      const content = typeof flags.content === "string" ? contentOf(usage, flags.content) : undefined;
      const client = await tools();
      const { key, entry } = await client.decide(
        id as string,
        {
          decision,
          ...(typeof scope === "string" ? { scope: scope as ApprovalScope } : {}),
          ...(typeof flags.reason === "string" ? { reason: flags.reason } : {}),
          ...(content ? { content } : {}),
          ...(flags.cancel === true ? { cancel: true } : {}),
        },
        signal,
      );
      await (output === "json"
        ? writeJson(stdout, { key, entry })
        : writeLine(stdout, `${key}\t${entry.state}\t${entry.tool}`));
      return 0;
    },
  });
}

function contentOf(usage: string, text: string): NonNullable<ApprovalDecision["content"]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw usageError(usage, `--content is not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw usageError(usage, '--content takes a JSON object, e.g. \'{"name": "Ada"}\'');
  // the fields' kinds are checked by the decision itself, against the form's schema
  return parsed as NonNullable<ApprovalDecision["content"]>;
}

export const approveCommand = decisionCommand("approve");
export const denyCommand = decisionCommand("deny");
