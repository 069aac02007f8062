/**
 * A provider-neutral model API (after pi-ai): one request shape, one response shape, one event
 * stream, whatever wire format the provider speaks. Tool names here are always ours (dotted,
 * e.g. `edit.replace`); the adapters map them to what each API accepts and back.
 */

/** A tool call as the model wrote it. */
export interface ToolCall {
  /** The provider's id for the call; a tool result answers it by this id. */
  id: string;
  /** Our tool name (`edit.replace`), or the name exactly as the model wrote it when it named no tool we sent. */
  name: string;
  /**
   * The raw JSON text of the arguments. The loop parses it; a reply cut off by the token limit
   * leaves it half-written, and it is kept as such.
   */
  argsText: string;
}

export interface UserMessage {
  role: "user";
  content: string;
}

export interface AssistantMessage {
  role: "assistant";
  text: string;
  toolCalls: ToolCall[];
  /** What the loop kept with the answer (agent/step-record.ts); absent on runs recorded before it. Never sent. */
  step?: StepRecord;
}

/**
 * Kept with each model answer in the session, so a run replays and compares from the tree alone
 * (agent/step-record.ts makes it).
 */
export interface StepRecord {
  stop: StopReason;
  usage: Usage;
  /** Milliseconds since the epoch the prompt was built for (its `{{date}}`). */
  at: number;
  /** sha-256 over the system text and the tool hashes: equal hashes, equal prompts. */
  prompt: string;
  /** The system text, on a turn's first step and whenever it changed since the turn's previous step. */
  system?: string;
  /** Each tool sent, by name: the first 16 hex of the sha-256 of its description and schema; as `system`. */
  tools?: Record<string, string>;
  /** The model that answered (the provider's name for it), for the run's page. */
  model?: string;
  /**
   * sha-256 of the answer's text and calls as stored: an answer changed after the run no longer
   * has it, and its replay stops there.
   */
  answer?: string;
}

export interface ToolResultMessage {
  role: "tool";
  /** The `id` of the call this answers. */
  toolCallId: string;
  /** Our name of the tool called. */
  name: string;
  content: string;
  isError: boolean;
}

export type ChatMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** A tool offered to the model. */
export interface ToolSchema {
  /** Our dotted name, e.g. `edit.replace`. */
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  system: string;
  messages: ChatMessage[];
  tools: ToolSchema[];
  /** Overrides the configured limit for this request. */
  maxTokens?: number;
}

/** Why the model stopped: done talking, hit its token limit, or wants tools run. */
export type StopReason = "stop" | "length" | "tool_calls";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface ChatResponse {
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  /** As reported by the provider; zeros when it reported none. */
  usage: Usage;
}

/**
 * What a call reports while it runs. `index` is the call's position in `ChatResponse.toolCalls`.
 * `retry` comes only before any byte of a reply arrived, so no delta precedes a retry.
 */
export type StreamEvent =
  | { type: "text_delta"; delta: string }
  | { type: "toolcall_start"; index: number; id: string; name: string }
  | { type: "toolcall_delta"; index: number; delta: string }
  | { type: "retry"; attempt: number; delayMs: number; reason: string; status?: number }
  | { type: "done"; response: ChatResponse };

export interface CompleteOptions {
  /** Aborts the call, including a wait between retries: the promise rejects with LLM_ABORTED. */
  signal: AbortSignal;
  /** Called synchronously for each event, in order; it must not throw. */
  onEvent?: (event: StreamEvent) => void;
}

export interface Provider {
  readonly api: "openai" | "anthropic";
  readonly model: string;
  /**
   * One model call. Resolves with the whole reply; rejects with an `AgentError`
   * (`LLM_HTTP`, `LLM_RATE_LIMITED`, `LLM_TIMEOUT`, `LLM_NETWORK`, `LLM_STREAM_CUT`, `LLM_ABORTED`,
   * `LLM_BAD_RESPONSE`).
   */
  complete(request: ChatRequest, options: CompleteOptions): Promise<ChatResponse>;
  /** Closes the connections this provider opened (not a dispatcher passed in). */
  close(): Promise<void>;
}
