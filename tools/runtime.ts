import { realpathSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { Tree, TreeNode } from "../tree/types.js";
import { applyChange, askPerson, type PendingApproval } from "./approval-flow.js";
import { type Approvals, createApprovals, type ProposedChange } from "./approvals.js";
import { capText } from "./cap.js";
import { compileParams, parseDeclaration, type ToolDeclaration, ToolName } from "./declaration.js";
import { isToolError, ToolError, type ToolErrorCode, type ToolKind } from "./errors.js";
import { checkPolicy, netHosts, policyPaths } from "./gate.js";
import { hashOf } from "./hash.js";
import type { HookVerdict, ToolCall, ToolHooks } from "./hooks.js";
import { builtinRegistry, runBuiltinImpl } from "./impl/builtin.js";
import { runHttpImpl } from "./impl/http.js";
import { type LlmClient, runLlmImpl } from "./impl/llm.js";
import { runShellImpl } from "./impl/shell.js";
import { argProblems, signatureOf } from "./json-schema.js";
import { createKeyedLock } from "./locks.js";
import type { McpClient } from "./mcp/client.js";
import { createPolicyReader, type Policy } from "./policy.js";
import { builtinPowers, grantOf, type Power } from "./powers.js";
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
  /**
   * Folders no file tool reads, writes, lists or searches whatever the policy says: the embedded
   * store's folder (its files hold the policy and every denied key), when it lies in a root.
   */
  hiddenPaths?: readonly string[];
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
  /** The MCP client `mcp` declarations call through (tools/mcp/); without it they answer mcp_unavailable. */
  mcp?: Pick<McpClient, "call" | "needs">;
}

export interface CallOptions {
  /** The run making the call: its records go to /byteseek/tool/<vid>/. */
  vid: string;
  /** Aborting it stops the call (kind runtime, code aborted). */
  signal?: AbortSignal;
  /** The user approved this call (a person calling a tool directly: `--approve`, `approve: true`). */
  approve?: boolean;
  /**
   * A person may be asked (the agent loop): a call that needs confirmation, or a change to what a
   * person wrote, writes an approval entry and waits for the decision (policy.approvalTimeoutMs).
   * Without it such a call answers `denied` (needs_approval) at once.
   */
  waitForApproval?: boolean;
  /** Told when the call starts waiting for a person, with the approval key. */
  onApproval?: (pending: PendingApproval) => void;
}

/** A declaration that parsed, as a model (and the prompt assembler) sees it. */
export interface ValidTool {
  name: string;
  key: string;
  declaration: ToolDeclaration;
  /** The run that last wrote the declaration, when a run did (agent-written). */
  owner?: string;
  /** Why every call would be denied by the policy as it stands (a power the run lacks, a switched-off tool it wraps). */
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
  /**
   * Every declaration under /byteseek/tools/, valid ones by name, invalid ones with their problems.
   * With `vid`, a tool needing a power that run does not hold is `blocked` (else: the default grant).
   */
  listTools(vid?: string): Promise<ToolCatalogue>;
  /** Waits until the usage counters of every call answered so far are stored (before closing the tree). */
  flush(): Promise<void>;
  /** flush(), then removes the server's folder of call output (every call's, at the latest now). */
  close(): Promise<void>;
  /** Real path of the workspace handed to the tools. */
  readonly workspace: string;
  /** The approvals kept in the tree (request, wait, decide), shared with every other caller. */
  readonly approvals: Approvals;
}

/** What ran: the declaration's key, the revision it was read at, the hash of its value, and who wrote it. */
export interface DeclRef {
  key: string;
  modRev: number;
  hash: string;
  /** The run that wrote it, or "person" (HTTP, the CLI, the seeder). */
  writer: string;
}

type Resolved =
  | {
      ok: true;
      key: string;
      declaration: ToolDeclaration;
      agentWritten: boolean;
      decl: DeclRef;
      /** Set when a `builtin` alias wraps a declaration with confirm: true. */
      inheritedConfirm?: string;
    }
  | { ok: false; result: ToolResult; decl?: DeclRef };

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
  const hidden = (options.hiddenPaths ?? []).map(realWorkspace);
  const readPolicy = createPolicyReader(tree);
  const usage = createUsageCounter(tree, logger);
  const pendingUsage = new Set<Promise<void>>();
  const awaitUsage = options.usageWrites === "await";
  const fileLocks = createKeyedLock();
  const runLocks = createKeyedLock();
  const approvals = createApprovals(tree);
  const powersOf = (ref: string): readonly Power[] => builtinPowers(ref, registry.get(ref)?.powers);
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
    const raw = node.kind === "json" ? node.value.value : undefined;
    const decl: DeclRef = { key, modRev: node.modRev, hash: hashOf(raw), writer: node.vid ?? "person" };
    if (!p.declaration.enabled)
      return {
        ok: false,
        decl,
        result: failure(
          "vet",
          "disabled_tool",
          `${name} is switched off (enabled: false in ${key}); use another tool, or ask the user to switch it on`,
          { key },
        ),
      };
    const wrapped = await wrappedRules(name, p.declaration);
    if (wrapped.off)
      return { ok: false, decl, result: failure("vet", "disabled_tool", wrapped.off, { key }) };
    return {
      ok: true,
      key,
      declaration: p.declaration,
      agentWritten: node.vid !== undefined,
      decl,
      ...(wrapped.confirm ? { inheritedConfirm: wrapped.confirm } : {}),
    };
  }

  /**
   * A `builtin` alias (a declaration named other than the built-in it runs) takes the rules of the
   * built-in's own declaration at /byteseek/tools/<ref>: switched off (or removed) there, the alias
   * is off too; confirm there, confirm here. So a new name never launders a person's rule.
   */
  async function wrappedRules(
    name: string,
    decl: ToolDeclaration,
  ): Promise<{ off?: string; confirm?: string }> {
    if (decl.impl.kind !== "builtin" || decl.impl.ref === name) return {};
    const ref = decl.impl.ref;
    const baseKey = `${TOOLS_DIR}${ref}`;
    const node = await tree.get(baseKey);
    const base = node && node.kind !== "index" ? parseNode(baseKey, ref, node) : undefined;
    return aliasRules(name, ref, base);
  }

  function aliasRules(
    name: string,
    ref: string,
    base: ReturnType<typeof parseDeclaration> | undefined,
  ): { off?: string; confirm?: string } {
    const off = (why: string) =>
      `${name} runs the built-in ${ref}, which ${why}, so ${name} is off too; use another tool, or ask the user`;
    if (!base) return { off: off(`is not declared (${TOOLS_DIR}${ref} was removed)`) };
    if (!base.ok) return { off: off(`has an invalid declaration at ${TOOLS_DIR}${ref}`) };
    if (!base.declaration.enabled) return { off: off("is switched off") };
    return base.declaration.confirm ? { confirm: `${ref}.confirm (inherited)` } : {};
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

  async function listTools(vid?: string): Promise<ToolCatalogue> {
    const rev = tree.syncRevision ? await tree.syncRevision() : tree.revision();
    if (listed?.rev !== rev) listed = { rev, catalogue: await readCatalogue() };
    const loaded = await readPolicy();
    const valid = listed.catalogue.valid.map(function withGrant(t) {
      if (t.blocked !== undefined || !loaded.ok) return t;
      const lacking = lackingPowers(t.declaration, loaded.policy, vid ?? "");
      return lacking ? { ...t, blocked: lacking } : t;
    });
    return { valid, invalid: [...listed.catalogue.invalid] };
  }

  /** The powers a tool needs whatever its arguments (not net, whose host may depend on them) that a run lacks. */
  function lackingPowers(decl: ToolDeclaration, policy: Policy, vid: string): string | undefined {
    const { grant, rule } = grantOf(policy.grants, vid);
    const impl = decl.impl;
    const needs: readonly Power[] =
      impl.kind === "builtin"
        ? powersOf(impl.ref)
        : impl.kind === "shell"
          ? ["exec"]
          : impl.kind === "llm"
            ? ["model"]
            : [];
    const missing = needs.filter((p) => p !== "tree" && p !== "net" && !grant[p]);
    if (missing.length === 0) return undefined;
    return `needs the power ${missing.map((p) => `"${p}"`).join(", ")}, which the policy does not grant (${rule})`;
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
        const legacy = policyLoaded.ok ? policyLoaded.policy.agentImpls : undefined;
        if (!policyLoaded.ok) tool.blocked = "the policy at /byteseek/policy is invalid";
        else if (node.vid !== undefined && legacy && !legacy.includes(p.declaration.impl.kind))
          tool.blocked = `agent-written tools may not use impl kind "${p.declaration.impl.kind}" (the policy's legacy agentImpls rule)`;
        else {
          const wrapped = await wrappedRules(child.name, p.declaration);
          if (wrapped.off) tool.blocked = wrapped.off;
        }
        valid.push(tool);
      }
      after = page.next;
    } while (after);
    return { valid, invalid };
  }

  async function gate(
    call: ToolCall,
    policy: Policy,
    inheritedConfirm: string | undefined,
    runHooks = true,
  ): Promise<{ result?: ToolResult; rule: string }> {
    for (const hook of runHooks ? hooks : []) {
      if (!hook.before) continue;
      // biome-ignore lint/suspicious/noConfusingVoidType: what a before-hook may answer.
      let verdict: HookVerdict | undefined | void;
      try {
        verdict = await hook.before(call);
      } catch (err) {
        logger.warn({ err, tool: call.name, vid: call.vid }, "a before-hook failed; denying the call");
        return {
          rule: "hook",
          result: failure(
            "denied",
            "denied",
            `${call.name} was refused: a check before the call failed (${(err as Error).message})`,
            {},
          ),
        };
      }
      if (verdict?.deny)
        return {
          rule: "hook",
          result: failure("denied", "denied", `${call.name} was refused: ${verdict.deny}`, {
            reason: verdict.deny,
          }),
        };
    }
    const verdict = await checkPolicy({
      name: call.name,
      declaration: call.declaration,
      args: call.args,
      vid: call.vid,
      agentWritten: call.agentWritten,
      approved: call.approved,
      policy,
      workspace,
      hidden,
      builtinPowers: powersOf,
      ...(inheritedConfirm ? { inheritedConfirm } : {}),
      ...(options.mcp ? { mcpNeeds: options.mcp.needs } : {}),
    });
    if (verdict.allowed) return { rule: verdict.rule };
    return {
      rule: verdict.rule,
      result: failure("denied", verdict.code, verdict.reason, {
        reason: verdict.reason,
        rule: verdict.rule,
        ...(verdict.power ? { power: verdict.power } : {}),
      }),
    };
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
    const paths = await policyPaths(policy, workspace);
    paths.deny.push(...hidden);
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
      roots: paths.roots,
      deny: paths.deny,
      denyKeys: policy.denyKeys,
      approved: call.approved,
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
        return runHttpImpl(impl, call.args, ctx, netHosts(policy, grantOf(policy.grants, call.vid).grant));
      case "llm":
        return runLlmImpl(impl, call.args, ctx, llm);
      case "mcp":
        if (!options.mcp)
          throw new ToolError(
            "mcp_unavailable",
            "this byteseek has no MCP client to call upstream servers with",
          );
        return options.mcp.call(impl, call.args, ctx);
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

  /** Steps 1–5: everything up to the record; `meta` is what the record says ran and why. */
  async function answer(
    name: string,
    args: unknown,
    options: CallOptions,
    meta: RecordMeta,
    scopes: OwnedScope[],
  ): Promise<ToolResult> {
    const resolved = await resolve(name);
    if (resolved.decl) meta.decl = resolved.decl;
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
    else {
      let gated = await gate(call, loaded.policy, resolved.inheritedConfirm);
      if (gated.result?.details.code === "needs_approval" && options.waitForApproval) {
        const asked = await approvalOf(
          call,
          gated.rule,
          `${name} needs a person's approval (rule: ${gated.rule})`,
          resolved.decl,
          loaded.policy,
          options,
        );
        if (asked.key) meta.approval = asked.key;
        if (asked.approved) {
          call.approved = true;
          gated = await gate(call, loaded.policy, resolved.inheritedConfirm, false);
          gated.rule = `${gated.rule}; ${asked.rule}`;
        } else gated = { rule: gated.rule, result: asked.refusal };
      }
      meta.gate = { rule: gated.rule };
      result = gated.result;
    }
    if (!result && loaded.ok) {
      const policy = loaded.policy;
      result = decl.sequential
        ? await runLocks.run(options.vid, () => execute(call, policy, options.signal, scopes))
        : await execute(call, policy, options.signal, scopes);
      const change = result.details.change as ProposedChange | undefined;
      if (result.details.code === "needs_approval" && change && options.waitForApproval)
        result = await changeApproval(call, change, result, resolved.decl, policy, options, meta);
    }
    return afterHooks(call, result as ToolResult);
  }

  /** A call that needs confirmation: a standing grant for the run, or a person's decision. */
  async function approvalOf(
    call: ToolCall,
    rule: string,
    reason: string,
    decl: DeclRef,
    policy: Policy,
    options: CallOptions,
  ): Promise<{ approved: boolean; rule: string; key?: string; refusal?: ToolResult }> {
    if (await approvals.approvedForRun(call.vid, call.name))
      return { approved: true, rule: `approved for run ${call.vid}` };
    const outcome = await askPerson(
      approvals,
      {
        vid: call.vid,
        tool: call.name,
        args: call.args,
        decl: { key: decl.key, modRev: decl.modRev, hash: decl.hash },
        reason,
        rule,
      },
      { timeoutMs: policy.approvalTimeoutMs, ...optionalWait(options) },
    );
    if (outcome.approved)
      return { approved: true, key: outcome.key, rule: `approved at ${outcome.key} (${outcome.scope})` };
    return {
      approved: false,
      key: outcome.key,
      rule,
      refusal: failure(
        "denied",
        "denied",
        `A person did not approve ${call.name} (${outcome.reason}); it did not run. Do not call it again unchanged: ask the user what to do instead.`,
        { approval: outcome.key, reason: outcome.reason, rule },
      ),
    };
  }

  /** A change to what a person wrote, proposed by a tool: applied only if a person approves it. */
  async function changeApproval(
    call: ToolCall,
    change: ProposedChange,
    proposed: ToolResult,
    decl: DeclRef,
    policy: Policy,
    options: CallOptions,
    meta: RecordMeta,
  ): Promise<ToolResult> {
    const outcome = await askPerson(
      approvals,
      {
        vid: call.vid,
        tool: call.name,
        args: call.args,
        decl: { key: decl.key, modRev: decl.modRev, hash: decl.hash },
        reason: proposed.text,
        rule: "person-written",
        change,
      },
      { timeoutMs: policy.approvalTimeoutMs, ...optionalWait(options) },
    );
    meta.approval = outcome.key;
    if (!outcome.approved)
      return failure(
        "denied",
        "denied",
        `A person did not approve the change to ${change.key} (${outcome.reason}); nothing was changed. Ask the user before trying again.`,
        { approval: outcome.key, reason: outcome.reason, key: change.key },
      );
    const applied = await applyChange(tree, change);
    return applied.ok
      ? {
          kind: "ok",
          isError: false,
          text: applied.text,
          details: { key: change.key, approval: outcome.key },
        }
      : failure("runtime", "version_mismatch", applied.text, { key: change.key, approval: outcome.key });
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
    const meta: RecordMeta = {};
    const scopes: OwnedScope[] = [];
    try {
      result = await answer(String(name), args, options, meta, scopes);
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
        ...(meta.decl
          ? {
              decl: { key: meta.decl.key, modRev: meta.decl.modRev, hash: meta.decl.hash },
              writer: meta.decl.writer,
            }
          : {}),
        ...(meta.gate ? { gate: meta.gate } : {}),
        ...(meta.approval ? { approval: meta.approval } : {}),
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

  return { call, listTools, flush, close, workspace, approvals };
}

/** Filled while a call is answered, written with its record. */
interface RecordMeta {
  decl?: DeclRef;
  gate?: { rule: string };
  approval?: string;
}

function optionalWait(options: CallOptions): {
  signal?: AbortSignal;
  onApproval?: (p: PendingApproval) => void;
} {
  return {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onApproval ? { onApproval: options.onApproval } : {}),
  };
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
