/**
 * An upstream MCP server's question (its elicitation during a call of one of its tools) forwarded
 * to the MCP host that made the call, when that host declared form elicitation: the tools side
 * keeps the question as an approval entry and decides it with the host's answer
 * (tools/gate/host-asks.ts); here is what the host is shown and how it is asked.
 *
 * What the host sees is byteseek's wording, never the upstream's alone: the message always starts
 * with the server that asks and the tool it asks during (an upstream cannot pass its question off
 * as byteseek's own approval), and the form is the spec's form elicitation only — a flat object of
 * string, number, integer, boolean and enum fields, rebuilt from the spec's schema with every
 * other keyword dropped. A form outside that, or one asking for a secret (a password, token, key
 * or credential field, by its name, title, description or schema hints: mcp/form-secrets.ts; MCP
 * forbids forms to ask for one), is not forwarded: the question is dismissed. A host is sent
 * `mode: "form"` only when its protocol revision has `mode` (formRequest).
 * The content the host sends back is checked against the upstream's own schema by the approval.
 */
import {
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type ElicitResult,
  type InputResponses,
  inputResponse,
  specTypeSchemas,
} from "@modelcontextprotocol/server";
import { printable } from "../tools/catalogue/printable.js";
import type { ElicitationAsked, HostAnswer, HostAsker, HostAskOptions } from "../tools/gate/asks.js";
import { secretSign } from "./form-secrets.js";

/** The key of a forwarded upstream question in `inputRequests` / `inputResponses` (2026 era). */
export const UPSTREAM_KEY = "byteseek_upstream";

/** At most this many characters of the upstream's own message are shown. */
const MAX_MESSAGE = 2000;

/** Whether a host declared form elicitation (a bare `elicitation: {}` is form, the pre-mode rule). */
export function canAskForm(caps: ClientCapabilities | undefined): boolean {
  const e = caps?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (e === undefined || e === null) return false;
  return e.form !== undefined || e.url === undefined;
}

/** A question as the host is asked it: byteseek's message and the spec's form, or why it is not forwarded. */
export type HostForm = { message: string; requestedSchema: ElicitRequestFormParams["requestedSchema"] };

/**
 * The form the host is shown for `question` (during `tool`), or throws an Error saying why it is
 * not forwarded. `refused` is why the host's last answer was refused, said with the question again.
 */
export function hostForm(question: ElicitationAsked, tool: string, refused?: string): HostForm {
  // the form as the upstream wrote it: the spec's check below drops hints such as writeOnly
  const asked = (question.schema as { properties?: unknown }).properties;
  for (const [name, field] of Object.entries(asked !== null && typeof asked === "object" ? asked : {})) {
    const sign = secretSign(name, field);
    if (sign !== undefined)
      throw new Error(
        `the form "${question.server}" asked for has a field for a secret (${printable(name).slice(0, 80)}: ${sign}), which MCP forms must never ask for: byteseek does not forward it`,
      );
  }
  const checked = specTypeSchemas.ElicitRequestFormParams["~standard"].validate({
    mode: "form",
    message: question.message,
    requestedSchema: question.schema,
  });
  if (checked.issues !== undefined)
    throw new Error(
      `byteseek forwards only the MCP spec's form elicitation (a flat object of string, number, boolean and enum fields), and the form "${question.server}" asked for is not one (${checked.issues
        .slice(0, 3)
        .map((i) => `${(i.path ?? []).map(String).join(".") || "form"}: ${i.message}`)
        .join("; ")})`,
    );
  const { properties, required } = checked.value.requestedSchema;
  const fields = new Set(Object.keys(properties));
  const own = printable(question.message);
  const shown = own.length > MAX_MESSAGE ? `${own.slice(0, MAX_MESSAGE - 1)}…` : own;
  return {
    message: `The MCP server "${question.server}" asks, during its tool ${tool} (this is its question, not byteseek's): ${shown}${refused === undefined ? "" : `\n(Your last answer was refused: ${printable(refused).slice(0, 500)})`}`,
    requestedSchema: {
      type: "object",
      properties,
      ...(required === undefined ? {} : { required: required.filter((r) => fields.has(r)) }),
    },
  };
}

/** The host's answer to a forwarded question (2026 era: the retried request's `inputResponses`); missing reads as cancel. */
export function upstreamAnswer(responses: InputResponses | Record<string, unknown> | undefined): HostAnswer {
  const view = inputResponse(responses, UPSTREAM_KEY);
  if (view.kind !== "elicit") return { action: "cancel" };
  return view.action === "accept"
    ? { action: "accept", content: view.content ?? {} }
    : { action: view.action };
}

/**
 * The first protocol revision whose `elicitation/create` has `mode` (it came with URL elicitation).
 * A host on an earlier one reads a request without it as a form, and a strict one refuses a param
 * its revision does not have: it is sent `mode` only from this revision on.
 */
export const ELICIT_MODE_SINCE = "2025-11-25";

/** The `elicitation/create` params of `form` for a host that negotiated `protocolVersion` (undefined: unknown). */
export function formRequest(form: HostForm, protocolVersion: string | undefined): ElicitRequestFormParams {
  // revisions are dates (YYYY-MM-DD): they compare as strings
  const knowsMode = protocolVersion !== undefined && protocolVersion >= ELICIT_MODE_SINCE;
  return knowsMode ? { mode: "form", ...form } : { ...form };
}

/** Sends the form as `elicitation/create` to the host on the call's own request (2025 era; see formRequest). */
export type SendElicitation = (
  form: HostForm,
  options: { signal: AbortSignal; timeout: number },
) => Promise<ElicitResult>;

/** The asker of a 2025-era host: each question is an `elicitation/create` of its own, tied to the call. */
export function pushAsker(send: SendElicitation, tool: string, who: { by: string; via: string }): HostAsker {
  return {
    ...who,
    async ask(question: ElicitationAsked, options: HostAskOptions): Promise<HostAnswer> {
      const form = hostForm(question, tool, options.refused);
      const answer = await send(form, { signal: options.signal, timeout: Math.max(1, options.timeoutMs) });
      return answer.action === "accept"
        ? { action: "accept", content: answer.content ?? {} }
        : { action: answer.action };
    },
  };
}
