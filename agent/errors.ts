/**
 * The agent's error catalogue. Model-provider failures are `AgentError`s with one of these codes;
 * the HTTP layer maps codes to statuses in one place (`server/errors.ts`).
 *
 * Messages are written for a person fixing the setup: they name the variable to set or the thing to
 * check. They never contain the API key, and neither do `details` nor `cause` chains we build.
 */
import { CodedError } from "../tree/errors.js";

export type AgentErrorCode =
  /** A required setting (api, url, model) is missing: the message names the variable to set. */
  | "LLM_NOT_CONFIGURED"
  /** A setting is present but unusable (unknown api, bad URL, non-numeric max tokens…). */
  | "LLM_BAD_CONFIG"
  /** A client named a model URL the server does not let clients name (`BYTESEEK_LLM_CLIENT_URLS`). */
  | "LLM_CLIENT_REFUSED"
  /** The provider answered with an error status (after retries for 5xx). `details.status`. */
  | "LLM_HTTP"
  /** 429 after every retry, or a Retry-After longer than we are willing to wait. */
  | "LLM_RATE_LIMITED"
  /** No response, or no next chunk of it, within the request timeout. */
  | "LLM_TIMEOUT"
  /** The provider could not be reached (after retries): refused, reset, DNS… */
  | "LLM_NETWORK"
  /** The response stream ended or broke before its end: the reply is incomplete. */
  | "LLM_STREAM_CUT"
  /** The caller's signal aborted the call. */
  | "LLM_ABORTED"
  /** The provider answered something that is not its wire format. */
  | "LLM_BAD_RESPONSE"
  /** A run id that cannot be a tree key segment. */
  | "AGENT_INVALID_VID"
  /** A setting of the agent's own (not the model's) is malformed: the message names it. */
  | "AGENT_BAD_SETTING"
  /** Another live process holds the run's lease (it is running it, or resuming it). */
  | "AGENT_RUN_BUSY"
  /** A resume of a run that ended (done or failed): there is nothing interrupted to continue. */
  | "AGENT_NOT_INTERRUPTED"
  /** No run has that id: no messages under /byteseek/session/<vid>/. */
  | "AGENT_RUN_NOT_FOUND"
  /** The run has not ended (running, waiting, interrupted): a replay or diff needs a finished run. */
  | "AGENT_RUN_NOT_FINISHED";

/** A run's failure; its details, facts a caller may show or map (status, attempts, missing variables), are key-free. */
export class AgentError extends CodedError<AgentErrorCode> {
  override readonly name = "AgentError";
}

export function isAgentError(err: unknown, code?: AgentErrorCode): err is AgentError {
  return err instanceof AgentError && (code === undefined || err.code === code);
}
