/**
 * What an upstream MCP server may ask for during a call, bound to that call's run: a question to
 * the run's person, kept as an approval entry (`/byteseek/approval/<vid>/<n>` with the form's schema)
 * and decided like every other approval; and a sub-call of the run's model, only when the run holds
 * the `model` power. The MCP client (tools/mcp/upstream-requests.ts) answers the upstream with these.
 */

import type { PendingApproval } from "../call/call-notices.js";
import type { ToolCall } from "../call/hooks.js";
import type { LlmClient } from "../impl/llm.js";
import type { CallAsks } from "../types.js";
import { askPerson } from "./approval-flow.js";
import { approvalReason } from "./approval-wording.js";
import type { Approvals, ElicitationAsked } from "./approvals.js";
import type { HostAsker, SampleReply } from "./asks.js";
import { putToHost } from "./host-asks.js";
import type { Policy } from "./policy.js";
import { grantOf } from "./powers.js";

export interface CallAsksOptions {
  call: ToolCall;
  policy: Policy;
  approvals: Approvals;
  llm?: LlmClient | undefined;
  /** The call's signal: an answer still awaited when it aborts is `cancel`. */
  signal: AbortSignal;
  /** Real paths: the workspace, and the policy's extra roots. */
  workspace: string;
  roots: readonly string[];
  /**
   * Told of each sample of the run's model: its tokens once answered, or that the call's end (its
   * timeout, an abort) stopped it first. The call's record counts them in the run's usage.
   */
  onSample?: ((told: SampleTold) => void) | undefined;
  /** Stops the call's timeout while a person is asked; answers the function that starts it again. */
  hold?: () => () => void;
  /**
   * Present when a person can be asked (the caller waits for approvals, or its host can ask): told
   * when a question waits; `host` puts it to the caller's host's person too (tools/gate/host-asks.ts).
   */
  person?:
    | { onApproval?: ((pending: PendingApproval) => void) | undefined; host?: HostAsker | undefined }
    | undefined;
}

/**
 * A sample of the run's model, as the call is told of it: the tokens it took, or `stopped` when the
 * call ended (timed out, aborted) before the model answered — a provider reports no tokens for a
 * reply cut short, so what it spent is not known.
 */
export type SampleTold = { tokens: SampleReply["tokens"] } | { stopped: true };

export function callAsks(o: CallAsksOptions): CallAsks {
  const { call, policy } = o;
  const { grant, rule } = grantOf(policy.grants, call.vid);
  const llm = o.llm;
  const model: CallAsks["model"] = !grant.model
    ? {
        refused: `run ${call.vid} does not hold the model power (${rule}), so byteseek does not sample its model for an MCP server`,
      }
    : !llm?.sample
      ? { refused: "byteseek has no model configured to sample" }
      : async (request, signal) => {
          let reply: SampleReply;
          try {
            reply = await (llm.sample as NonNullable<LlmClient["sample"]>)(request, signal);
          } catch (err) {
            if (signal?.aborted) o.onSample?.({ stopped: true });
            throw err;
          }
          o.onSample?.({ tokens: reply.tokens });
          return reply;
        };
  const roots = grant.read || grant.write ? [o.workspace, ...o.roots] : [];
  if (!o.person) return { model, roots };
  const { onApproval, host } = o.person;
  return {
    model,
    roots,
    async person(question: ElicitationAsked) {
      const facts = { tool: call.name, vid: call.vid, elicitation: question };
      const resume = o.hold?.();
      // the host's question lives as long as the entry's wait: decided elsewhere, timed out or aborted, it ends
      const asking = new AbortController();
      const tell = (pending: PendingApproval) => {
        onApproval?.(pending);
        if (host)
          void putToHost({
            approvals: o.approvals,
            host,
            question,
            approval: pending.key,
            signal: asking.signal,
            timeoutMs: policy.approvalTimeoutMs,
          });
      };
      const outcome = await askPerson(
        o.approvals,
        {
          vid: call.vid,
          tool: call.name,
          args: call.args,
          elicitation: question,
          reason: approvalReason(facts, "elicitation"),
          rule: "elicitation",
        },
        { timeoutMs: policy.approvalTimeoutMs, signal: o.signal, onApproval: tell },
      ).finally(() => {
        asking.abort();
        resume?.();
      });
      const entry = await o.approvals.read(outcome.key);
      const d = entry?.decision;
      // no answer in time, an aborted call, an entry removed: nobody chose, so the question is dismissed
      if (!outcome.approved) return { action: d?.action ?? "cancel", approval: outcome.key };
      return { action: "accept", content: d?.content ?? {}, approval: outcome.key };
    },
  };
}
