/** The call pipeline's contract: what a caller passes, what the pipeline is built from, what a call fills in on its way. */
import type { Logger } from "pino";
import type { Tree } from "../../tree/types.js";
import type { Catalogue, DeclRef } from "../catalogue/catalogue.js";
import type { Approvals } from "../gate/approvals.js";
import type { HostAsker } from "../gate/asks.js";
import type { GateInput } from "../gate/gate.js";
import type { LoadedPolicy } from "../gate/policy.js";
import type { Power } from "../gate/powers.js";
import type { CallOrigin } from "../records/records.js";
import type { KeyedLock, ToolResult } from "../types.js";
import type { PendingApproval, ToolProgress } from "./call-notices.js";
import type { Execute } from "./execute.js";
import type { ToolCall, ToolHooks } from "./hooks.js";
import type { CallIntent } from "./intent.js";
import type { IntentTiming, PlanIntent } from "./intent-plan.js";

export interface CallOptions {
  /** The run making the call: its records go to /byteseek/tool/<vid>/. */
  vid: string;
  /** Aborting it stops the call (kind runtime, code aborted). */
  signal?: AbortSignal;
  /** The user approved this call (a person calling a tool directly: `--approve`, `approve: true`). */
  approve?: boolean;
  /**
   * Who gave `approve: true` (`person (http)`, `person (cli)`) and the credential they came with
   * (`bearer token sha256:…`, `command line`): then an approval the call needs is kept in the tree
   * like every other — an entry decided at once, `once`, by them, via that credential — so the
   * audit shows the door. Without it, `approve` only lets the call through (in-process callers).
   */
  approvedBy?: string;
  approvedVia?: string;
  /**
   * A person may be asked (the agent loop): a call that needs confirmation, or a change to what a
   * person wrote, writes an approval entry and waits for the decision (policy.approvalTimeoutMs).
   * Without it such a call answers `denied` (needs_approval) at once.
   */
  waitForApproval?: boolean;
  /** Told when the call starts waiting for a person, with the approval key. */
  onApproval?: (pending: PendingApproval) => void;
  /**
   * The caller's host can ask its person an upstream MCP server's question itself (an MCP host that
   * declared elicitation): such a question waits as an approval entry, as for a waiting caller, and
   * is put to the host too; the first answer from any channel decides it (tools/gate/host-asks.ts).
   * It approves nothing else: a call that needs confirmation still answers needs_approval.
   */
  askHost?: HostAsker;
  /** Told of the call's progress while it runs (an upstream MCP server's progress and log lines, bounded). */
  onProgress?: (progress: ToolProgress) => void;
  /** The model's tool call this answers (the agent loop): kept in the record for a resumed run. */
  origin?: CallOrigin;
  /**
   * A resumed run running an interrupted call again (agent/resume.ts): the key of its `started`
   * record, which this call's records replace, keeping its idempotency key.
   */
  retry?: string;
  /**
   * A resumed run's interrupted call of unknown outcome, under the policy's `resumeUnknown: "ask"`:
   * it runs again only once a person approves (an approval entry; `waitForApproval` is implied),
   * else it answers `outcome_unknown` without running. `decided` is told what the person said.
   * A caller's own `approve: true` (without `approvedBy`) is that approval.
   */
  askRerun?: { decided?: (approved: boolean, approval: string) => void };
}

/**
 * Fault injection for the chaos test and bench (BYTESEEK_KILL_AT): told at the two points a
 * process may die during a call — `effect` (its started record written, the tool not yet run)
 * and `record` (the tool ran, its result not yet recorded).
 */
export type Failpoint = (point: "effect" | "record", call: { name: string; vid: string }) => void;

/**
 * How long a call's path waited for its started record, ms: the whole record's write for a call
 * that runs after it, only the wait at its effect (or for its result) for one that runs meanwhile
 * (`intentTiming`). The intent's cost to the call, for benches and metrics.
 */
export type IntentWait = (ms: number, call: { name: string; vid: string }) => void;

export interface PipelineOptions {
  tree: Tree;
  logger: Logger;
  hooks: readonly ToolHooks[];
  catalogue: Catalogue;
  readPolicy: () => Promise<LoadedPolicy>;
  execute: Execute;
  approvals: Approvals;
  workspace: string;
  hidden: readonly string[];
  powersOf: (ref: string) => readonly Power[];
  runLocks: KeyedLock;
  /** What an `mcp` tool's server needs (GateInput.mcpNeeds), from the MCP client. */
  mcpNeeds?: GateInput["mcpNeeds"] | undefined;
  /** Whether an `mcp` tool's upstream tool may be called (GateInput.mcpAllowed), from the MCP client. */
  mcpAllowed?: GateInput["mcpAllowed"] | undefined;
  /** What a call intends (side effect, file hashes), asked just before its started record. */
  planIntent: PlanIntent;
  /** When a call's started record is stored, against its effect (intent-plan.ts createIntentTiming); absent: before it runs. */
  intentTiming?: ((call: ToolCall) => IntentTiming) | undefined;
  failpoint?: Failpoint | undefined;
  onIntentWait?: IntentWait | undefined;
}

export interface CallPipeline {
  call(name: string, args: unknown, options: CallOptions): Promise<ToolResult>;
  /** Waits until the usage counters of every call answered so far are stored. */
  flush(): Promise<void>;
}

/** Filled while a call is answered, written with its record. */
export interface RecordMeta {
  /** The arguments as the caller sent them. */
  args: unknown;
  decl?: DeclRef;
  gate?: { rule: string };
  approval?: string;
  /** The call's started record (the call executed): its key, and what it intended. */
  started?: { key: string; intent: CallIntent };
}
