import type { Logger } from "pino";
import type { z } from "zod";
import type { Tree } from "../tree/types.js";
import type { ToolProgress } from "./call/call-notices.js";
import type { FileIntent, IntentContext, KeyIntent, KeyIntentContext } from "./call/intent.js";
import type { ToolDeclaration } from "./catalogue/declaration.js";
import type { ToolKind } from "./errors.js";
import type {
  ElicitAction,
  ElicitationAsked,
  ElicitContent,
  SampleReply,
  SampleRequest,
} from "./gate/asks.js";
import type { Power } from "./gate/powers.js";
import type { CommandScope } from "./process/scope.js";

/** What a tool's execute function answers on success. Failures are thrown as ToolError. */
export interface ToolOutput {
  /** Written for the model: a short summary it can act on. */
  text: string;
  /** Structured facts for programs (diffs, counts, paths); recorded with the call. */
  details?: Record<string, unknown>;
  /** Ask the agent loop to end the run after this result. */
  terminate?: boolean;
}

/** What a call run while its started record is written learns once the record is stored. */
export interface StoredIntent {
  /** `<vid>/<n>` of the call's record (of the record retried, on a resumed run's retry). */
  idempotencyKey: string;
}

/** Everything a tool's execute function may use. Handed in by the runtime for each call. */
export interface ToolContext {
  /** The run making the call. */
  vid: string;
  /** Aborted when the caller goes away or the call times out: stop work promptly. */
  signal: AbortSignal;
  /** Absolute real path of the workspace root the file tools may touch. */
  workspace: string;
  tree: Tree;
  logger: Logger;
  /** Serializes work on one key (a file's real path): concurrent edits of one file all land. */
  locks: KeyedLock;
  /** The policy's default timeout for commands, in ms. */
  defaultTimeoutMs: number;
  /** A person approved this call (directly, or by deciding its approval entry). */
  approved?: boolean;
  /** Real paths of the policy's extra workspace roots: file tools accept paths inside them too. */
  roots?: readonly string[];
  /** Real paths the policy denies: listings and searches skip what lies inside them. */
  deny?: readonly string[];
  /** Tree key prefixes the policy denies (and the policy itself): tree listings skip them. */
  denyKeys?: readonly string[];
  /** The policy's longest timeout, in ms: a call asking for more is refused (kind arg). */
  maxTimeoutMs: number;
  /** Everything a process this call starts needs: its environment, its mark, its folder, its end. */
  commands: CommandScope;
  /**
   * `<vid>/<n>`, the call's record: the same on a resumed run's retry (http impls send it as
   * Idempotency-Key). Absent for a tool that runs while its record is written: it reads the key
   * from what `intentDurable()` resolves with.
   */
  idempotencyKey?: string;
  /**
   * For a tool run while its started record is written (`awaitsIntent`, a `shell` or `http` impl):
   * resolves once the call's `started` record is stored (on disk, with the store at sync always),
   * with the record's idempotency key; rejects when it cannot be, or when the call is aborted or
   * times out meanwhile, and the effect must not happen. The tool awaits it right before its effect
   * becomes real (an edit's rename, a command's exec, an http request's sending), so its
   * preparation (the temp file written and fsynced, the sandbox set up, the connection opened)
   * overlaps the record's write. Absent: the record was stored before the tool started.
   */
  intentDurable?: () => Promise<StoredIntent>;
  /** Whom an upstream MCP server may ask during this call (tools/gate/call-asks.ts); absent: nobody. */
  asks?: CallAsks;
  /** Told of the call's progress while it runs (an upstream MCP server's progress and log messages). */
  onProgress?: (progress: ToolProgress) => void;
}

/**
 * What a call lets an upstream MCP server ask for while it runs: the run's person (its
 * `elicitation/create`, as an approval entry) and the run's model (its `sampling/createMessage`).
 */
export interface CallAsks {
  /** Asks the run's person; absent when nobody can be asked (the upstream hears `cancel` at once). */
  person?(
    question: ElicitationAsked,
  ): Promise<{ action: ElicitAction; content?: ElicitContent; approval: string }>;
  /** A sub-call of the run's model, or why the run may not make one (said to the upstream). */
  model: ((request: SampleRequest, signal: AbortSignal) => Promise<SampleReply>) | { refused: string };
  /**
   * The folders announced as its roots: the workspace and the policy's extra roots when the run's
   * grant reads or writes files, none otherwise (not the server's: the run's).
   */
  roots: readonly string[];
}

/** A built-in tool: a TypeScript function shipped with byteseek, bound by a factory. */
export interface BuiltinTool<Args = Record<string, unknown>> {
  /** The `ref` a declaration's `impl: {kind: "builtin", ref}` names, e.g. "edit.replace". */
  ref: string;
  /** The declaration shipped with byteseek, written into the tree at first start. */
  declaration: ToolDeclarationInput;
  /** The powers a call needs (powers.ts); default: the shipped table for byteseek's own refs, else none. */
  powers?: readonly Power[];
  execute(args: Args, ctx: ToolContext): Promise<ToolOutput>;
  /** The timeout a call asks for in its own arguments (shell.run's `timeout`), in ms: the boundary waits that long. */
  callTimeoutMs?(args: Record<string, unknown>): number | undefined;
  /**
   * The files a call will change, planned without changing them (the edit family): written in the
   * call's `started` record so a resumed run can tell from the files whether it happened.
   * Undefined: the change cannot be stated (the call counts as one that may not run twice).
   */
  intent?(args: Record<string, unknown>, ctx: IntentContext): Promise<FileIntent[] | undefined>;
  /**
   * The tree keys a call will write, planned without writing them (`tree.set`, `tree.del`): their
   * versions and value hashes before and as intended, so a resumed run tells from the keys whether
   * the write landed. Undefined: the write cannot be stated.
   */
  keyIntent?(args: Record<string, unknown>, ctx: KeyIntentContext): Promise<KeyIntent[] | undefined>;
  /**
   * The tool makes no change before it has awaited `ctx.intentDurable()` (and its commands start
   * through `ctx.commands`, which awaits it before each exec): the runtime may run it while its
   * started record is written. Only what is undone or harmless if the process dies may come before
   * (reading, planning, a temp file, creating a missing parent folder).
   */
  awaitsIntent?: true;
}

/** A declaration as written (defaults not yet applied): the input side of the zod schema. */
export type ToolDeclarationInput = z.input<typeof ToolDeclaration>;

/** What a call through the boundary answers. It never throws. */
export interface ToolResult {
  kind: ToolKind;
  isError: boolean;
  /** Exactly what the model sees. */
  text: string;
  details: Record<string, unknown>;
  /** The record key at /byteseek/tool/<vid>/<n>. */
  record?: string;
  terminate?: boolean;
}

/** Runs `fn` while holding the lock for `key`; callers with the same key run one at a time. */
export interface KeyedLock {
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
}
