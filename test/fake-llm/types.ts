/** A tool call the fake model makes. */
export interface FakeToolCall {
  /**
   * Our dotted name (`edit.replace`): the fake sends the provider-safe name it finds among the
   * request's tools, as a real model would. A name not offered is sent unchanged.
   */
  name: string;
  /** The arguments, sent as JSON text... */
  args?: unknown;
  /** ...or this exact text (half-written JSON for a reply cut by the token limit). */
  argsText?: string;
  id?: string;
}

/** One scripted reply. With none of the failure fields, a normal answer. */
export interface FakeReplyObject {
  text?: string;
  toolCalls?: FakeToolCall[];
  /** Why the model stopped; default "tool_calls" when there are calls, else "stop". */
  stop?: "stop" | "length" | "tool_calls";
  /** Default: input ≈ request bytes / 4, output ≈ reply characters / 4. */
  usage?: { inputTokens: number; outputTokens: number };
  /** Text and arguments are streamed in deltas of this many characters (default 4). */
  chunkSize?: number;
  /** An error status (429, 500…), answered with the provider's error body. */
  status?: number;
  /** The `Retry-After` header of an error: seconds, or an HTTP date. */
  retryAfter?: number | string;
  /** The error message of a `status` reply. */
  message?: string;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Send this many bytes of the body, then destroy the socket. */
  cutAfterBytes?: number;
  /** "headers": never answer; "body": send the headers and content but never the end. `close()` ends both. */
  hold?: "headers" | "body";
  /** Send this body verbatim (a malformed reply). */
  raw?: string;
  /**
   * OpenAI streams only: send every tool call under `index` 0, told apart by its id alone — as
   * Ollama streams parallel calls.
   */
  sharedCallIndex?: boolean;
}

/** A reply, or a function of the request that makes one (to answer what the request carried). */
export type FakeReply =
  | FakeReplyObject
  | ((request: FakeRequest) => FakeReplyObject | Promise<FakeReplyObject>);

/** A tool as the request offered it (its provider-safe name). */
export interface FakeTool {
  name: string;
  description: string;
  parameters: unknown;
}

/**
 * A message of the request in one shape for both APIs: an Anthropic user message holding tool
 * results becomes one `tool` message per result. Tool names are as sent (provider-safe).
 */
export type FakeMessage =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls: { id: string; name: string; argsText: string }[] }
  | { role: "tool"; toolCallId: string; text: string; isError?: boolean };

/** What one request carried. */
export interface FakeRequest {
  /** 0 for the first request the fake received. */
  index: number;
  api: "openai" | "anthropic";
  path: string;
  /** The client's port: equal across requests that reused one keep-alive connection. */
  remotePort: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The parsed JSON body, as sent. */
  body: Record<string, unknown>;
  stream: boolean;
  model: string;
  maxTokens: number | undefined;
  system: string;
  tools: FakeTool[];
  messages: FakeMessage[];
}

export interface FakeLlm {
  /** `http://127.0.0.1:<port>`: OpenAI clients use `${url}/v1`, Anthropic clients `url`. */
  url: string;
  /** Every request received, in order. */
  requests: FakeRequest[];
  /** Appends replies; each request takes the next one. An empty script answers 500, saying so. */
  script(...replies: FakeReply[]): void;
  /** Replies scripted and not yet used. */
  pending(): number;
  /** Stops the server, cutting any held or open connection. */
  close(): Promise<void>;
}

/** A reply ready to encode. */
export interface Planned {
  text: string;
  calls: { id: string; name: string; argsText: string }[];
  stop: "stop" | "length" | "tool_calls";
  chunkSize: number;
  usage: { inputTokens: number; outputTokens: number };
  sharedCallIndex: boolean;
}

/** Encoded SSE events: the content, and the events that end the reply. */
export interface EncodedStream {
  content: string[];
  end: string[];
}
