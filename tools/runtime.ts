import { realpathSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { Tree, TreeNode } from "../tree/types.js";
import { capText } from "./cap.js";
import { compileParams, parseDeclaration, type ToolDeclaration, ToolName } from "./declaration.js";
import { isToolError, ToolError, type ToolErrorCode, type ToolKind } from "./errors.js";
import { checkPolicy } from "./gate.js";
import type { HookVerdict, ToolCall, ToolHooks } from "./hooks.js";
import { builtinRegistry, runBuiltinImpl } from "./impl/builtin.js";
import { runHttpImpl } from "./impl/http.js";
import { type LlmClient, runLlmImpl } from "./impl/llm.js";
import { runShellImpl } from "./impl/shell.js";
import { argProblems, signatureOf } from "./json-schema.js";
import { createKeyedLock } from "./locks.js";
import { createPolicyReader, type Policy } from "./policy.js";
import { createCommandScope, createScratchRoot, type OwnedScope } from "./process/scope.js";
import { writeRecord } from "./records.js";
import type { BuiltinTool, ToolContext, ToolOutput, ToolResult } from "./types.js";
import { createUsageCounter, UNKNOWN_TOOLS } from "./usage.js";

/** Where declarations live: `/byteseek/tools/<name>`. */
export const TOOLS_DIR = "/byteseek/tools/";

/** A run id: one tree key segment. */
const VID = /^[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,127}$/;

/** How long an aborted tool gets to wind down (and report its own output) before the boundary answers. */
const ABORT_GRACE_MS = 3000;

export interface RuntimeOptions {
  tree: Tree;
  /** The shipped functions `builtin` declarations may name. */
  builtins: readonly BuiltinTool[];
  logger: Logger;
  /** The root the file tools may touch (resolved to its real path once). */
  workspace: string;
  /** The model, for `llm` tools; without it they answer "no model configured". */
  llm?: LlmClient;
  /** Run in order around every resolved call; see ToolHooks for what they may do. */
  hooks?: ToolHooks | readonly ToolHooks[];
  /**
   * `background` (default): a call answers once its record is stored; its usage counters are
   * stored just after, grouped with other calls' (exact all the same) — `flush()` waits for them.
   * `await`: a call answers only once its counters are stored too (one more store commit per call).
   */
  usageWrites?: "background" | "await";
  /**
   * The environment commands take their allow-listed variables (and the policy's passEnv) from: the
   * server's, as read at start before its secrets were withdrawn. Default: process.env.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the server's private folder of call output and temp folders is made (default: the OS temp dir). */
  scratchParent?: string;
}

export interface CallOptions {
  /** The run making the call: its records go to /byteseek/tool/<vid>/. */
  vid: string;
  /** Aborting it stops the call (kind runtime, code aborted). */
  signal?: AbortSignal;
  /** The user approved this call (tools that need confirmation). */
  approve?: boolean;
}

/** A declaration that parsed, as a model (and the prompt assembler) sees it. */
export interface ValidTool {
  name: string;
  key: string;
  declaration: ToolDeclaration;
  /** The run that last wrote the declaration, when a run did (agent-written). */
  owner?: string;
  /** Why every call would be denied by the policy as it stands (e.g. a forbidden impl kind). */
  blocked?: string;
}

export interface InvalidTool {
  name: string;
  key: string;
  problems: string[];
}

export interface ToolCatalogue {
  valid: ValidTool[];
  invalid: InvalidTool[];
}

export interface Runtime {
  /** The one call boundary (resolve → validate → gate → execute → after → record → result). Never throws. */
  call(name: string, args: unknown, options: CallOptions): Promise<ToolResult>;
  /** Every declaration under /byteseek/tools/, valid ones by name, invalid ones with their problems. */
  listTools(): Promise<ToolCatalogue>;
  /** Waits until the usage counters of every call answered so far are stored (before closing the tree). */
  flush(): Promise<void>;
  /** flush(), then removes the server's folder of call output (every call's, at the latest now). */
  close(): Promise<void>;
  /** Real path of the workspace handed to the tools. */
  readonly workspace: string;
}

type Resolved =
  | { ok: true; key: string; declaration: ToolDeclaration; agentWritten: boolean }
  | { ok: false; result: ToolResult };

/** Builds the tool runtime over a tree. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const { tree, logger, llm } = options;
  const registry = builtinRegistry(options.builtins);
  const hooks: readonly ToolHooks[] = options.hooks
    ? Array.isArray(options.hooks)
      ? (options.hooks as readonly ToolHooks[])
      : [options.hooks as ToolHooks]
    : [];
  const workspace = realWorkspace(options.workspace);
  const readPolicy = createPolicyReader(tree);
  const usage = createUsageCounter(tree, logger);
  const pendingUsage = new Set<Promise<void>>();
  const awaitUsage = options.usageWrites === "await";
  const fileLocks = createKeyedLock();
  const runLocks = createKeyedLock();
  const parsed = new Map<string, { modRev: number; result: ReturnType<typeof parseDeclaration> }>();
  const commandEnv = options.env ?? process.env;
  const scratchRoot = createScratchRoot(options.scratchParent);

  function parseNode(
    key: string,
    name: string,
    node: TreeNode | { kind: string; modRev: number; value?: unknown },
  ) {
    const hit = parsed.get(key);
    if (hit && hit.modRev === node.modRev) return hit.result;
    let result: ReturnType<typeof parseDeclaration>;
    if (node.kind !== "json")
      result = { ok: false, problems: [`a declaration must be a json value, not ${node.kind}`] };
    else {
      const raw = (node as { value?: { value: unknown } }).value?.value;
      result = parseDeclaration(raw, { builtins: registry, name });
    }
    // Sized above the tool counts we expect (1,000 declared tools must not thrash it).
    if (parsed.size > 20_000) parsed.clear();
    parsed.set(key, { modRev: node.modRev, result });
    return result;
  }

  async function resolve(name: string): Promise<Resolved> {
    if (!ToolName.safeParse(name).success) return { ok: false, result: await unknownTool(name) };
    const key = `${TOOLS_DIR}${name}`;
    const node = await tree.get(key);
    if (!node || node.kind === "index") return { ok: false, result: await unknownTool(name) };
    const p = parseNode(key, name, node);
    if (!p.ok)
      return {
        ok: false,
        result: failure(
          "vet",
          "invalid_declaration",
          `${name} cannot be called: its declaration at ${key} is invalid:\n- ${p.problems.join("\n- ")}\nFix the declaration (tree.set ${key}) or use another tool.`,
          { key, problems: p.problems },
        ),
      };
    if (!p.declaration.enabled)
      return {
        ok: false,
        result: failure(
          "vet",
          "disabled_tool",
          `${name} is switched off (enabled: false in ${key}); use another tool, or ask the user to switch it on`,
          { key },
        ),
      };
    return { ok: true, key, declaration: p.declaration, agentWritten: node.vid !== undefined };
  }

  async function unknownTool(name: string): Promise<ToolResult> {
    let known: string[] = [];
    try {
      known = (await listTools()).valid.filter((t) => t.declaration.enabled).map((t) => t.name);
    } catch {
      // The list is only a hint.
    }
    const family = name.split(".")[0];
    const near = known.filter((n) => n.startsWith(`${family}.`));
    const hint = known.length
      ? ` Available tools: ${(near.length ? near : known).slice(0, 40).join(", ")}.`
      : "";
    return failure("vet", "unknown_tool", `There is no tool named "${name}".${hint}`, { name });
  }

  // The catalogue as of one revision: nothing in the tree changed since, so neither did it.
  let listed: { rev: number; catalogue: ToolCatalogue } | undefined;

  async function listTools(): Promise<ToolCatalogue> {
    const rev = tree.syncRevision ? await tree.syncRevision() : tree.revision();
    if (listed?.rev !== rev) listed = { rev, catalogue: await readCatalogue() };
    return { valid: [...listed.catalogue.valid], invalid: [...listed.catalogue.invalid] };
  }

  async function readCatalogue(): Promise<ToolCatalogue> {
    const valid: ValidTool[] = [];
    const invalid: InvalidTool[] = [];
    const policyLoaded = await readPolicy();
    let after: string | undefined;
    do {
      let page: Awaited<ReturnType<Tree["list"]>>;
      try {
        page = await tree.list(TOOLS_DIR, { limit: 500, ...(after ? { after } : {}) });
      } catch (err) {
        if ((err as { code?: string }).code === "TREE_NOT_FOUND") break;
        throw err;
      }
      for (const child of page.children) {
        if (child.kind === "index") continue;
        const key = `${TOOLS_DIR}${child.name}`;
        const node = child.value === undefined ? await tree.get(key) : child;
        if (!node) continue;
        const p = parseNode(key, child.name, node);
        if (!p.ok) {
          invalid.push({ name: child.name, key, problems: p.problems });
          continue;
        }
        const tool: ValidTool = { name: child.name, key, declaration: p.declaration };
        if (node.vid !== undefined) tool.owner = node.vid;
        if (!policyLoaded.ok) tool.blocked = "the policy at /byteseek/policy is invalid";
        else if (node.vid !== undefined && !policyLoaded.policy.agentImpls.includes(p.declaration.impl.kind))
          tool.blocked = `agent-written tools may not use impl kind "${p.declaration.impl.kind}"`;
        valid.push(tool);
      }
      after = page.next;
    } while (after);
    return { valid, invalid };
  }

  async function gate(call: ToolCall, policy: Policy): Promise<ToolResult | undefined> {
    for (const hook of hooks) {
      if (!hook.before) continue;
      // biome-ignore lint/suspicious/noConfusingVoidType: what a before-hook may answer.
      let verdict: HookVerdict | undefined | void;
      try {
        verdict = await hook.before(call);
      } catch (err) {
        logger.warn({ err, tool: call.name, vid: call.vid }, "a before-hook failed; denying the call");
        return failure(
          "denied",
          "denied",
          `${call.name} was refused: a check before the call failed (${(err as Error).message})`,
          {},
        );
      }
      if (verdict?.deny)
        return failure("denied", "denied", `${call.name} was refused: ${verdict.deny}`, {
          reason: verdict.deny,
        });
    }
    const refusal = await checkPolicy({
      name: call.name,
      declaration: call.declaration,
      args: call.args,
      agentWritten: call.agentWritten,
      approved: call.approved,
      policy,
      workspace,
    });
    if (refusal) return failure("denied", refusal.code, refusal.reason, { reason: refusal.reason });
    return undefined;
  }

  async function execute(
    call: ToolCall,
    policy: Policy,
    callerSignal: AbortSignal | undefined,
    scopes: OwnedScope[],
  ): Promise<ToolResult> {
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
    const commands = createCommandScope({
      source: commandEnv,
      passEnv: policy.passEnv,
      outputCapBytes: policy.outputCapBytes,
      root: scratchRoot,
    });
    scopes.push(commands);
    const controller = new AbortController();
    const onCallerAbort = () =>
      controller.abort(new ToolError("aborted", `${call.name} was aborted by the caller`));
    if (callerSignal?.aborted) onCallerAbort();
    else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new ToolError("timeout", `${call.name} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    const ctx: ToolContext = {
      vid: call.vid,
      signal: controller.signal,
      workspace,
      tree,
      logger: logger.child({ tool: call.name, vid: call.vid }),
      locks: fileLocks,
      defaultTimeoutMs: Math.min(policy.defaultTimeoutMs, policy.maxTimeoutMs),
      maxTimeoutMs: policy.maxTimeoutMs,
      commands,
    };
    try {
      if (controller.signal.aborted) return fromError(controller.signal.reason, call.name);
      const work = runImpl(call, ctx, policy);
      const settled = work.then(
        (output) => ({ output }),
        (error: unknown) => ({ error }),
      );
      const aborted = new Promise<"aborted">((res) => {
        controller.signal.addEventListener("abort", () => res("aborted"), { once: true });
      });
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
      if ("error" in outcome) return fromError(outcome.error, call.name);
      return success(outcome.output);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener("abort", onCallerAbort);
    }
  }

  function runImpl(call: ToolCall, ctx: ToolContext, policy: Policy): Promise<ToolOutput> {
    const impl = call.declaration.impl;
    switch (impl.kind) {
      case "builtin":
        return runBuiltinImpl(impl, call.args, ctx, registry);
      case "shell":
        return runShellImpl(impl, call.args, ctx, call.declaration.params);
      case "http":
        return runHttpImpl(impl, call.args, ctx, policy.httpHosts);
      case "llm":
        return runLlmImpl(impl, call.args, ctx, llm);
    }
  }

  async function afterHooks(call: ToolCall, result: ToolResult): Promise<ToolResult> {
    let current = result;
    for (const hook of hooks) {
      if (!hook.after) continue;
      try {
        const next = await hook.after(call, current);
        if (next) {
          const kind = next.kind ?? current.kind;
          current = {
            ...current,
            ...next,
            kind,
            isError: kind !== "ok",
            details: next.details ?? current.details,
          };
        }
      } catch (err) {
        logger.warn({ err, tool: call.name, vid: call.vid }, "an after-hook failed; result kept");
      }
    }
    return current;
  }

  /** Steps 1–5: everything up to the record. */
  async function answer(
    name: string,
    args: unknown,
    options: CallOptions,
    scopes: OwnedScope[],
  ): Promise<ToolResult> {
    const resolved = await resolve(name);
    if (!resolved.ok) return resolved.result;
    const { declaration: decl, key } = resolved;

    if (args === undefined || args === null) args = {};
    if (typeof args !== "object" || Array.isArray(args))
      return failure(
        "arg",
        "invalid_args",
        `${name} takes an object of named arguments. Signature: ${signatureOf(name, decl.params)}`,
        {
          signature: signatureOf(name, decl.params),
        },
      );
    const validated = structuredClone(args) as Record<string, unknown>;
    const validate = compileParams(decl.params);
    if (!validate(validated)) {
      const problems = argProblems(validate.errors, validated);
      const signature = signatureOf(name, decl.params);
      const lines = problems.map(
        (p) =>
          `- ${p.field === "/" ? "the arguments" : p.field.slice(1).replaceAll("/", ".")}: expected ${p.expected}${p.got ? `, got ${p.got}` : ""}`,
      );
      return failure(
        "arg",
        "invalid_args",
        `Invalid arguments for ${name}:\n${lines.join("\n")}\nSignature: ${signature}\nFix the arguments and call again.`,
        { problems, signature },
      );
    }

    const call: ToolCall = {
      name,
      args: validated,
      vid: options.vid,
      key,
      declaration: decl,
      agentWritten: resolved.agentWritten,
      approved: options.approve === true,
      signal: options.signal ?? new AbortController().signal,
    };
    const loaded = await readPolicy();
    let result: ToolResult | undefined;
    if (!loaded.ok)
      result = failure(
        "denied",
        "denied",
        `No tool can run: the policy at /byteseek/policy is invalid (${loaded.problems.join("; ")}). Tell the user.`,
        { problems: loaded.problems },
      );
    else result = await gate(call, loaded.policy);
    if (!result && loaded.ok) {
      const policy = loaded.policy;
      result = decl.sequential
        ? await runLocks.run(options.vid, () => execute(call, policy, options.signal, scopes))
        : await execute(call, policy, options.signal, scopes);
    }
    return afterHooks(call, result as ToolResult);
  }

  async function call(name: string, args: unknown, options: CallOptions): Promise<ToolResult> {
    const ts = Date.now();
    const started = performance.now();
    const vid = options?.vid;
    if (typeof vid !== "string" || !VID.test(vid))
      return failure(
        "arg",
        "invalid_args",
        `the run id (vid) ${JSON.stringify(vid)} is not valid: use letters, digits and _.:@- (at most 128)`,
        {},
      );
    let result: ToolResult;
    const scopes: OwnedScope[] = [];
    try {
      result = await answer(String(name), args, options, scopes);
    } catch (err) {
      logger.error({ err, tool: name, vid }, "tool call failed inside the runtime");
      result = failure(
        "runtime",
        "failed",
        `${name} failed inside byteseek: ${(err as Error)?.message ?? String(err)}. Try again, or use another tool.`,
        {},
      );
    }
    const capped = capText(result.text);
    if (capped.truncated)
      result = { ...result, text: capped.text, details: { ...result.details, textTruncated: true } };
    const ms = Math.round((performance.now() - started) * 1000) / 1000;
    // made-up names share one counter: a run calling many cannot grow its usage node without bound
    const tool = result.details.code === "unknown_tool" ? UNKNOWN_TOOLS : String(name);
    const counted = usage.add(vid, { tool, kind: result.kind, ms }).catch((err: unknown) => {
      logger.error({ err, vid }, "cannot update the usage counters");
    });
    pendingUsage.add(counted);
    void counted.then(() => pendingUsage.delete(counted));
    const [record] = await Promise.all([
      writeRecord(tree, logger, vid, {
        name: String(name),
        args: args ?? {},
        kind: result.kind,
        isError: result.isError,
        text: result.text,
        details: result.details,
        ts,
        ms,
      }),
      awaitUsage ? counted : undefined,
    ]);
    // the record is written: what the call's processes left (output, temp files, stragglers) goes
    await Promise.all(
      scopes.map((s) =>
        s.dispose().catch((err: unknown) => logger.warn({ err, vid }, "cannot clean up after a call")),
      ),
    );
    return record === undefined ? result : { ...result, record };
  }

  async function flush(): Promise<void> {
    while (pendingUsage.size > 0) await Promise.all(pendingUsage);
  }

  async function close(): Promise<void> {
    await flush();
    await scratchRoot.remove();
  }

  return { call, listTools, flush, close, workspace };
}

function success(output: ToolOutput): ToolResult {
  const result: ToolResult = { kind: "ok", isError: false, text: output.text, details: output.details ?? {} };
  if (output.terminate) result.terminate = true;
  return result;
}

function failure(
  kind: ToolKind,
  code: ToolErrorCode,
  text: string,
  details: Record<string, unknown>,
): ToolResult {
  return { kind, isError: true, text, details: { code, ...details } };
}

/** Any throw becomes a result: a ToolError keeps its kind and code, anything else is `runtime`. */
function fromError(err: unknown, name: string): ToolResult {
  if (isToolError(err)) {
    const kind = err.kind === "ok" || err.kind === "truncated" ? "runtime" : err.kind;
    return failure(kind, err.code, err.message, err.details);
  }
  const message = err instanceof Error ? err.message : String(err);
  return failure("runtime", "failed", `${name} failed: ${message}`, {});
}

function realWorkspace(workspace: string): string {
  const abs = path.resolve(workspace);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}
