/**
 * What the loop's steps share: the parts a turn runs on (`TurnDeps`) and one turn's (or resume's)
 * state while it runs (`TurnState`). The steps themselves are agent/turn-step.ts (ask the model,
 * store its answer, answer its calls), agent/turn-calls.ts (one call, one round) and
 * agent/resume-round.ts (the interrupted round of a resumed run); agent/loop.ts starts and ends turns.
 */
import type { Logger } from "pino";
import type { Runtime } from "../tools/runtime.js";
import type { Tree } from "../tree/types.js";
import type { AgentEvent, TurnResult } from "./events.js";
import type { ClientLlmSettings } from "./llm-config.js";
import type { ChatMessage, Provider } from "./providers/types.js";
import type { PromptDigest } from "./step-record.js";

export interface TurnInput {
  vid?: string;
  input: string;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** Approve calls of tools that need confirmation. */
  approve?: boolean;
  /** Who approves them, and the credential they came with (CallOptions.approvedBy/Via): kept in the approvals. */
  approvedBy?: string;
  approvedVia?: string;
  /** Model settings the person's client sent; they win over the server's (see `resolveLlmConfig`). */
  llm?: ClientLlmSettings;
}

/** The parts every step of every turn runs on. */
export interface TurnDeps {
  tree: Tree;
  runtime: Runtime;
  logger: Logger;
  /** The model, given the turn's client settings (a function: configuration edited in the tree applies next turn). */
  provider: (client?: ClientLlmSettings) => Promise<Provider>;
  maxSteps: number;
  /** The time a step's prompt is built for. */
  clock: () => number;
}

/** What a turn's steps have stored of its usage so far: the end of the turn stores the rest. */
export interface Counted {
  steps: number;
  input: number;
  output: number;
}

/** One turn's (or resume's) state while it runs. */
export interface TurnState {
  vid: string;
  o: Omit<TurnInput, "input">;
  /** The user's message memory is recalled by. */
  input: string;
  signal: AbortSignal;
  emit: (e: AgentEvent) => void;
  log: Logger;
  /** The conversation as the model is sent it: the session, and what the next commit stores. */
  messages: ChatMessage[];
  /** The tail of `messages` not in the session yet (tool results): the next commit appends them. */
  unsaved: ChatMessage[];
  counted: Counted;
  /** Tools tools.search answered this turn: sent in full from the next step on (deferred tool lists). */
  found: Set<string>;
  failingRounds: number;
  /** What the previous step asked: a step record keeps the prompt's parts only where they changed. */
  asked?: PromptDigest;
  result: TurnResult;
}

/** Adds a message the next commit stores. */
export function addUnsaved(s: TurnState, m: ChatMessage): void {
  s.messages.push(m);
  s.unsaved.push(m);
}
