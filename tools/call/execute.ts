/**
 * Execution of one call that passed the gate: its timeout, its abort, the context a tool gets, and
 * the impl kind's runner (impl/kinds.ts). Whatever the tool does, this answers a result.
 */
import type { Logger } from "pino";
import type { Tree } from "../../tree/types.js";
import { isToolError, ToolError } from "../errors.js";
import type { Approvals } from "../gate/approvals.js";
import { type CallAsksOptions, callAsks } from "../gate/call-asks.js";
import { netHosts, policyPaths } from "../gate/gate.js";
import type { Policy } from "../gate/policy.js";
import { grantOf } from "../gate/powers.js";
import { type ImplEnv, runImpl } from "../impl/kinds.js";
import type { LlmClient } from "../impl/llm.js";
import { startEgressProxy } from "../net/proxy.js";
import {
  createCommandScope,
  type OwnedScope,
  type ScopeSandbox,
  type ScratchRoot,
} from "../process/scope.js";
import { grantView } from "../sandbox/grant-view.js";
import type { SandboxRunner } from "../sandbox/runner.js";
import type { BuiltinTool, KeyedLock, StoredIntent, ToolContext, ToolResult } from "../types.js";
import type { ToolCall } from "./hooks.js";
import { fromError, success } from "./results.js";

/** How long an aborted tool gets to wind down (and report its own output) before the boundary answers. */
const ABORT_GRACE_MS = 3000;

export interface ExecutorOptions {
  tree: Tree;
  logger: Logger;
  registry: ReadonlyMap<string, BuiltinTool>;
  llm?: LlmClient | undefined;
  mcp?: ImplEnv["mcp"];
  lookup?: ImplEnv["lookup"];
  /** The connections http impls keep between calls of a run (the runtime closes them). */
  keptHttp?: ImplEnv["keptHttp"];
  workspace: string;
  hidden: readonly string[];
  commandEnv: Readonly<Record<string, string | undefined>>;
  scratchRoot: ScratchRoot;
  fileLocks: KeyedLock;
  /** Starts every command of a call in the sandbox of its run's grant. */
  sandbox: SandboxRunner;
  /** Where an upstream MCP server's questions during a call wait for a person. */
  approvals: Approvals;
  /** The tools run `vid`'s model is offered, for messages that suggest one (ToolError.explain); absent: none. */
  offered?: (vid: string) => Promise<ReadonlySet<string>>;
}

export type Execute = (
  call: ToolCall,
  policy: Policy,
  callerSignal: AbortSignal | undefined,
  scopes: OwnedScope[],
  /**
   * `person`: present when a person can be asked during the call (an upstream's question);
   * `onProgress`: told of its progress; `onSample`: told of the tokens of each sample of the run's model.
   */
  listeners?: {
    person?: CallAsksOptions["person"];
    onProgress?: ToolContext["onProgress"];
    onSample?: CallAsksOptions["onSample"];
  },
  /** How the call's effect meets its started record, when it is not stored before the call runs. */
  intent?: IntentHooks,
) => Promise<ToolResult>;

/** How a call's effect meets its started record when the record is not stored before the call runs. */
export interface IntentHooks {
  /** The call runs while the record is written: resolves once it is stored (ToolContext.intentDurable). */
  durable?: () => Promise<void>;
  /** The tree the call writes through: its first write commits the record with it (intent-write.ts). */
  tree?: Tree;
}

export function createExecutor(options: ExecutorOptions): Execute {
  const { tree, logger, registry, llm, mcp, lookup, workspace, hidden, commandEnv, scratchRoot, fileLocks } =
    options;

  /** The sandbox a call's commands get: its run's grant over the policy's paths and limits. */
  function sandboxOf(
    call: ToolCall,
    policy: Policy,
    paths: { roots: string[]; deny: string[] },
  ): ScopeSandbox {
    if (policy.sandbox === "off") return { mode: "off" };
    const { grant, rule } = grantOf(policy.grants, call.vid);
    const hosts = netHosts(policy, grant);
    return {
      mode: "on",
      runner: options.sandbox,
      limits: policy.limits,
      // a run holding net reaches its hosts through the call's egress proxy only; without net, nothing
      ...(hosts.length > 0
        ? {
            egress: (dir: string) =>
              startEgressProxy({
                dir,
                hosts,
                grantRule: `${rule}.net`,
                logger: logger.child({ part: "egress", vid: call.vid }),
                ...(lookup ? { lookup } : {}),
              }),
          }
        : {}),
      async view() {
        return grantView({
          grant,
          roots: [workspace, ...paths.roots],
          deny: paths.deny,
          credentialPaths: policy.credentialPaths,
          serverPaths: [...hidden, await scratchRoot.path()],
          home: commandEnv.HOME,
        });
      },
    };
  }

  /** A tool's error with the message it writes once the workspace and the run's offered tools are known. */
  async function explained(err: unknown, vid: string): Promise<unknown> {
    if (!isToolError(err) || err.explain === undefined) return err;
    let offered: ReadonlySet<string> = new Set();
    try {
      offered = (await options.offered?.(vid)) ?? offered;
    } catch (e) {
      logger.debug({ err: e }, "could not read the offered tools: suggesting none");
    }
    const message = err.explain({ workspace, offers: (name) => offered.has(name) });
    return new ToolError(err.code, message, { kind: err.kind, details: err.details, cause: err.cause });
  }

  return async function execute(call, policy, callerSignal, scopes, listeners = {}, intent = {}) {
    const intentDurable = intent.durable;
    const decl = call.declaration;
    const impl = decl.impl;
    // a call that asks for its own timeout (shell.run) gets it; beyond the policy's maximum the tool refuses it
    const asked = impl.kind === "builtin" ? registry.get(impl.ref)?.callTimeoutMs?.(call.args) : undefined;
    const timeoutMs = Math.min(
      asked ??
        ("timeoutMs" in impl ? impl.timeoutMs : undefined) ??
        decl.timeoutMs ??
        policy.defaultTimeoutMs,
      policy.maxTimeoutMs,
    );
    const paths = await policyPaths(policy, workspace);
    const controller = new AbortController();
    /** Rejects with the call's timeout or abort, once it comes. */
    const stopped = whenAborted(controller.signal);
    // a call timed out or aborted while its record is being stored stops waiting, and makes no effect
    const effectMayFollow = intentDurable
      ? async (): Promise<StoredIntent> => {
          await Promise.race([intentDurable(), stopped]);
          controller.signal.throwIfAborted();
          return storedIntent(call);
        }
      : undefined;
    const commands = createCommandScope({
      source: commandEnv,
      passEnv: policy.passEnv,
      outputCapBytes: policy.outputCapBytes,
      root: scratchRoot,
      sandbox: sandboxOf(call, policy, paths),
      ...(effectMayFollow ? { beforeExec: effectMayFollow } : {}),
    });
    scopes.push(commands);
    const onCallerAbort = () =>
      controller.abort(new ToolError("aborted", `${call.name} was aborted by the caller`));
    if (callerSignal?.aborted) onCallerAbort();
    else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
    const clock = callClock(timeoutMs, () =>
      controller.abort(new ToolError("timeout", `${call.name} timed out after ${timeoutMs} ms`)),
    );
    const deny = [...paths.deny, ...hidden];
    const ctx: ToolContext = {
      vid: call.vid,
      signal: controller.signal,
      workspace,
      tree: intent.tree ?? tree,
      logger: logger.child({ tool: call.name, vid: call.vid }),
      locks: fileLocks,
      defaultTimeoutMs: Math.min(policy.defaultTimeoutMs, policy.maxTimeoutMs),
      maxTimeoutMs: policy.maxTimeoutMs,
      commands,
      roots: paths.roots,
      deny,
      denyKeys: policy.denyKeys,
      approved: call.approved,
      ...(call.idempotencyKey ? { idempotencyKey: call.idempotencyKey } : {}),
      ...(effectMayFollow ? { intentDurable: effectMayFollow } : {}),
      ...(listeners.onProgress ? { onProgress: listeners.onProgress } : {}),
      ...(impl.kind === "mcp"
        ? {
            asks: callAsks({
              call,
              policy,
              approvals: options.approvals,
              llm,
              signal: controller.signal,
              person: listeners.person,
              onSample: listeners.onSample,
              workspace,
              roots: paths.roots,
              hold: clock.hold,
            }),
          }
        : {}),
    };
    const env: ImplEnv = { registry, policy, llm, mcp, lookup, keptHttp: options.keptHttp };
    try {
      if (controller.signal.aborted) return fromError(controller.signal.reason, call.name);
      const work = runImpl(call, ctx, env);
      const settled = work.then(
        (output) => ({ output }),
        (error: unknown) => ({ error }),
      );
      const aborted = stopped.catch(() => "aborted" as const);
      let outcome = await Promise.race([settled, aborted]);
      if (outcome === "aborted") {
        // Give the tool a moment to stop and say what it had done (a command's output so far).
        let grace: NodeJS.Timeout | undefined;
        const late = await Promise.race([
          settled,
          new Promise<"late">((res) => {
            grace = setTimeout(() => res("late"), ABORT_GRACE_MS);
          }),
        ]);
        clearTimeout(grace);
        outcome = late === "late" ? { error: controller.signal.reason } : late;
        if ("error" in outcome && !isToolError(outcome.error)) outcome = { error: controller.signal.reason };
      }
      if ("error" in outcome) return fromError(await explained(outcome.error, call.vid), call.name);
      return success(outcome.output);
    } finally {
      clock.stop();
      callerSignal?.removeEventListener("abort", onCallerAbort);
    }
  };
}

/** What a call's stored started record gave it: its key, set on the call once the record is written. */
function storedIntent(call: ToolCall): StoredIntent {
  if (call.idempotencyKey === undefined)
    throw new ToolError("failed", `${call.name} did not run: its started record has no key. Try again.`, {
      kind: "runtime",
    });
  return { idempotencyKey: call.idempotencyKey };
}

/** Rejects with the signal's reason once it is aborted (never settles otherwise). */
function whenAborted(signal: AbortSignal): Promise<never> {
  const p = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  p.catch(() => {});
  return p;
}

/**
 * A call's timeout that stops while a person is asked during it (an upstream's question): the
 * person's time counts against the policy's approvalTimeoutMs, as for every approval, not the call's.
 */
function callClock(timeoutMs: number, onTimeout: () => void): { hold(): () => void; stop(): void } {
  let remaining = timeoutMs;
  let since = Date.now();
  let timer: NodeJS.Timeout | undefined = setTimeout(onTimeout, remaining);
  let holds = 0;
  let stopped = false;
  return {
    hold() {
      if (holds++ === 0 && timer) {
        clearTimeout(timer);
        timer = undefined;
        remaining -= Date.now() - since;
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--holds === 0 && !stopped) {
          since = Date.now();
          timer = setTimeout(onTimeout, Math.max(0, remaining));
        }
      };
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
