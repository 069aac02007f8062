import type { ApprovalDecision } from "../tools/gate/approvals.js";

/**
 * The decision an inline answer stands for: y = approve once, r = approve for this run,
 * a = approve always, n = deny; anything else decides nothing (the call keeps waiting).
 */
export function decisionOf(answer: string): ApprovalDecision | undefined {
  switch (answer.trim().toLowerCase()) {
    case "y":
    case "yes":
      return { decision: "approve", scope: "once" };
    case "r":
      return { decision: "approve", scope: "run" };
    case "a":
      return { decision: "approve", scope: "always" };
    case "n":
    case "no":
      return { decision: "deny", reason: "denied at the terminal" };
    default:
      return undefined;
  }
}
