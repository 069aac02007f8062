/**
 * An upstream's question put to the person in the caller's own host (an MCP host's elicitation),
 * beside the approval entry it waits at: the host's answer decides the entry like any channel's,
 * so the form's schema checks its content (a misfit is refused and the host asked again, a few
 * times at most) and the entry says who answered and through which session. Whichever channel
 * decides first wins; the host's question ends (its signal aborts) once the entry is decided, the
 * wait times out or the call ends.
 */
import { isApprovalError } from "../errors.js";
import type { ApprovalDecision, Approvals } from "./approvals.js";
import type { ElicitationAsked, ElicitContent, HostAnswer, HostAsker } from "./asks.js";

/** The host is asked at most this many times for one question (each misfit refused asks again). */
export const HOST_ASK_ROUNDS = 3;

export interface PutToHost {
  approvals: Approvals;
  host: HostAsker;
  question: ElicitationAsked;
  /** The approval entry the question waits at. */
  approval: string;
  signal: AbortSignal;
  timeoutMs: number;
}

/** Asks the host and decides the entry with its answer; never throws (the entry's wait decides the rest). */
export async function putToHost(o: PutToHost): Promise<void> {
  const { approvals, host, approval, signal } = o;
  const dismiss = (reason: string) =>
    approvals
      .decide(approval, { decision: "deny", cancel: true, reason }, host.by, host.via)
      .then(() => undefined)
      .catch(() => {
        // decided elsewhere meanwhile: that decision stands
      });
  let refused: string | undefined;
  for (let round = 0; round < HOST_ASK_ROUNDS; round++) {
    let answer: HostAnswer;
    try {
      answer = await host.ask(o.question, {
        approval,
        signal,
        timeoutMs: o.timeoutMs,
        ...(refused === undefined ? {} : { refused }),
      });
    } catch (err) {
      if (signal.aborted) return;
      // a host that cannot ask (it refused, failed or went away): nobody there will answer
      return dismiss(`the MCP host could not ask the person: ${(err as Error)?.message ?? String(err)}`);
    }
    if (signal.aborted) return;
    const stray = strayFields(answer, o.question);
    if (stray !== undefined) {
      refused = stray;
      continue;
    }
    try {
      await approvals.decide(approval, decisionOf(answer), host.by, host.via);
      return;
    } catch (err) {
      if (!isApprovalError(err) || err.code !== "APPROVAL_INVALID") return;
      refused = err.message;
    }
  }
  return dismiss(`the MCP host's answers did not fit the form ${HOST_ASK_ROUNDS} times: ${refused}`);
}

/** Why an accepted content is refused for fields the form does not have (a host sends the form's fields only). */
function strayFields(answer: HostAnswer, question: ElicitationAsked): string | undefined {
  if (answer.action !== "accept" || answer.content === null || typeof answer.content !== "object")
    return undefined;
  const fields = (question.schema as { properties?: Record<string, unknown> }).properties ?? {};
  const stray = Object.keys(answer.content).filter((k) => !Object.hasOwn(fields, k));
  if (stray.length === 0) return undefined;
  return `the content has fields the form does not ask for (${stray
    .slice(0, 5)
    .map((k) => JSON.stringify(k.slice(0, 40)))
    .join(", ")}): send only the form's fields`;
}

/** The host's answer as a decision (`decide` parses the content: anything but a flat form is refused). */
function decisionOf(answer: HostAnswer): ApprovalDecision {
  if (answer.action === "accept")
    return { decision: "approve", content: (answer.content ?? {}) as ElicitContent };
  return { decision: "deny", ...(answer.action === "cancel" ? { cancel: true } : {}) };
}
