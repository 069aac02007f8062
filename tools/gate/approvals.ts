/**
 * Approvals kept in the tree: a call (or a change to what a person wrote) that needs a person's
 * yes waits at `/byteseek/approval/<vid>/<n>` until someone decides it — from the CLI, HTTP, the
 * web page, a terminal, or any other caller of `decide`. The entries are read-only and written by
 * byteseek only (the tree tools refuse the folder), so an agent can never approve itself.
 *
 * The three functions other callers use (an MCP server, say):
 * - `requestApproval(req)` writes a pending entry and answers its key;
 * - `awaitDecision(key, {signal, timeoutMs})` waits (watching the key) for the decision, and
 *   decides `denied` "no answer" itself when the time runs out;
 * - `decide(key, decision)` approves or denies a pending entry (a person's act), with a scope:
 *   `once` (this call), `run` (this tool for the rest of the run), `always` (a rule in the policy).
 */
import { z } from "zod";
import { dirs, keys, runDirs } from "../../shared/keys.js";
import { isTreeError } from "../../tree/errors.js";
import type { Tree } from "../../tree/types.js";
import { type Json, json } from "../../tree/value.js";
import { argProblems, createSchemaCompiler, type SchemaCompiler } from "../catalogue/json-schema.js";
import { type ApprovalEntry, ApprovalScope } from "../doc/approval-entry.js";
import { docs } from "../doc/docs.js";
import { appendDoc, parseDoc, parseDocValue, readDoc, writeDoc } from "../doc/read-write.js";
import { ApprovalError } from "../errors.js";
import { RUN_ID_PART } from "../run-id.js";
import { type ElicitAction, ElicitContent } from "./asks.js";
import { POLICY_KEY } from "./policy.js";

/** An approval named `<vid>/<n>`. */
const APPROVAL_ID = new RegExp(`^(${RUN_ID_PART})\\/([0-9]{1,15})$`);

export const APPROVAL_DIR = dirs.approvals;
export const approvalDir = runDirs.approvals;
/** The tools a person approved for the rest of a run (scope `run`): a hidden entry beside the approvals. */
export const runApprovalsKey = keys.runApprovals;

export { type ElicitAction, type ElicitationAsked, ElicitContent } from "./asks.js";
export { ApprovalScope };

/** A person's answer, as `POST /v1/approvals/<vid>/<n>` takes it. */
export const ApprovalDecision = z
  .object({
    decision: z.enum(["approve", "deny"]),
    scope: ApprovalScope.default("once").describe(
      "once: this call; run: this tool for the rest of the run; always: a rule in the policy",
    ),
    reason: z.string().max(2000).optional().describe("Why; shown to the model on a denial"),
    content: ElicitContent.optional().describe(
      "For an upstream MCP server's question (an elicitation): the answer approve sends, checked against the schema it asked with",
    ),
    cancel: z
      .boolean()
      .optional()
      .describe(
        "For an upstream MCP server's question: deny answers `cancel` (dismissed) instead of `decline`",
      ),
  })
  .strict();
export type ApprovalDecision = z.input<typeof ApprovalDecision>;

export { ApprovalEntry, ProposedChange } from "../doc/approval-entry.js";

export type ApprovalRequest = Omit<ApprovalEntry, "state" | "ts" | "decision">;

/** How a wait ended: approved (with the scope) or denied (with why). */
export interface ApprovalOutcome {
  key: string;
  approved: boolean;
  scope?: ApprovalScope;
  reason: string;
}

export interface Approvals {
  requestApproval(req: ApprovalRequest): Promise<string>;
  awaitDecision(key: string, options: { signal?: AbortSignal; timeoutMs: number }): Promise<ApprovalOutcome>;
  /** `via` names the credential the person decided with (kept in the entry, for the audit). */
  decide(key: string, decision: ApprovalDecision, by?: string, via?: string): Promise<ApprovalEntry>;
  /** The entry at `key`, or undefined. */
  read(key: string): Promise<ApprovalEntry | undefined>;
  /** Pending entries, oldest run first (bounded by `limit`). */
  pending(limit?: number): Promise<Array<{ key: string; entry: ApprovalEntry }>>;
  /** Whether a person approved `tool`, as declared with `hash`, for the rest of run `vid`. */
  approvedForRun(vid: string, tool: string, hash?: string): Promise<boolean>;
}

/**
 * A standing approval (scope `run` or `always`) names the declaration's hash, `<tool>@sha256:<hex>`:
 * it covers that declaration only, and lapses when the declaration changes (an agent rewriting a
 * tool's argv does not keep what a person gave the old one). A plain name in policy.approved is a
 * rule a person wrote by hand and covers whatever that name declares.
 */
export function approvalFor(tool: string, hash: string | undefined): string {
  return hash === undefined ? tool : `${tool}@sha256:${hash}`;
}

/** The tool and hash of a standing approval (`hash` absent for a plain name). */
export function parseStanding(item: string): { tool: string; hash?: string } {
  const at = item.lastIndexOf("@sha256:");
  return at < 0 ? { tool: item } : { tool: item.slice(0, at), hash: item.slice(at + "@sha256:".length) };
}

/**
 * The action (and content) a decision sends back to an upstream's question, checked: an answer
 * given for good makes no sense (scope `once` only), the content must fit the form's schema, and
 * content or `cancel` on an approval that is no question is refused rather than ignored.
 */
function elicitAnswer(
  schemas: SchemaCompiler,
  key: string,
  entry: ApprovalEntry | undefined,
  d: z.infer<typeof ApprovalDecision>,
): { action?: ElicitAction; content?: ElicitContent } {
  if (!entry?.elicitation) {
    if (d.content !== undefined || d.cancel !== undefined)
      throw new ApprovalError(
        "APPROVAL_INVALID",
        `${key} is not a question from an MCP server: --content and --cancel apply to those only`,
      );
    return {};
  }
  if (d.scope !== "once")
    throw new ApprovalError(
      "APPROVAL_INVALID",
      `${key} is a question from the MCP server "${entry.elicitation.server}": an answer is given once, so --scope ${d.scope} does not apply`,
    );
  if (d.decision === "deny") {
    if (d.content !== undefined)
      throw new ApprovalError("APPROVAL_INVALID", `${key}: content goes with approve (accept), not deny`);
    return { action: d.cancel ? "cancel" : "decline" };
  }
  if (d.cancel !== undefined)
    throw new ApprovalError("APPROVAL_INVALID", `${key}: --cancel goes with deny, not approve`);
  const content = d.content ?? {};
  let problems: ReturnType<typeof argProblems>;
  try {
    const validate = schemas.compile(entry.elicitation.schema);
    problems = validate(structuredClone(content)) ? [] : argProblems(validate.errors, content);
  } catch (err) {
    throw new ApprovalError(
      "APPROVAL_INVALID",
      `${key}: the server's form schema does not compile (${(err as Error).message}); deny it`,
    );
  }
  if (problems.length > 0)
    throw new ApprovalError(
      "APPROVAL_INVALID",
      `${key}: the content does not fit the form the MCP server "${entry.elicitation.server}" asked for: ${problems
        .map((p) => `${p.field}: expected ${p.expected}${p.got === undefined ? "" : `, got ${p.got}`}`)
        .join("; ")}. Answer again with --content '{…}', or deny it`,
      { problems },
    );
  return { action: "accept", content };
}

/** The key of an approval named `<vid>/<n>` (as the CLI and the route take it), or an ApprovalError. */
export function approvalKey(id: string): string {
  const m = APPROVAL_ID.exec(id.replace(/^\/?byteseek\/approval\//, ""));
  if (!m)
    throw new ApprovalError(
      "APPROVAL_INVALID",
      `"${id}" does not name an approval: give <vid>/<n>, e.g. r1abc/0`,
    );
  return `${approvalDir(m[1] as string)}${m[2]}`;
}

export function createApprovals(tree: Tree): Approvals {
  // the forms' schemas of upstream questions, compiled once each
  const schemas = createSchemaCompiler({ maxCached: 64 });
  function read(key: string): Promise<ApprovalEntry | undefined> {
    return readDoc(tree, docs.approval, key);
  }

  async function requestApproval(req: ApprovalRequest): Promise<string> {
    const entry: ApprovalEntry = { ...req, state: "pending", ts: Date.now() };
    const res = await appendDoc(tree, docs.approval, approvalDir(req.vid), entry, { ro: true });
    return res.key;
  }

  /** Writes a decision on a pending entry (compare-and-set: exactly one decision wins). */
  async function settle(
    key: string,
    state: "approved" | "denied",
    decision: NonNullable<ApprovalEntry["decision"]>,
  ): Promise<ApprovalEntry> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const node = await tree.get(key);
      const entry = node?.kind === "index" ? undefined : parseDoc(docs.approval, key, node);
      if (!node || !entry)
        throw new ApprovalError(
          "APPROVAL_NOT_FOUND",
          `there is no approval at ${key}; list them with kvspace list ${APPROVAL_DIR}`,
        );
      if (entry.state !== "pending")
        throw new ApprovalError("APPROVAL_DECIDED", `${key} was already ${entry.state}`, {
          state: entry.state,
        });
      const next: ApprovalEntry = { ...entry, state, decision };
      try {
        await writeDoc(tree, docs.approval, key, next, {
          ifVersion: node.version,
          ro: true,
          force: true,
        });
        return next;
      } catch (err) {
        if (!isTreeError(err, "TREE_VERSION_MISMATCH")) throw err;
      }
    }
    throw new ApprovalError("APPROVAL_DECIDED", `${key} is being decided by someone else; read it again`);
  }

  async function decide(
    key: string,
    input: ApprovalDecision,
    by = "person",
    via?: string,
  ): Promise<ApprovalEntry> {
    const parsed = ApprovalDecision.safeParse(input);
    if (!parsed.success)
      throw new ApprovalError(
        "APPROVAL_INVALID",
        `a decision is {"decision": "approve"|"deny", "scope"?: "once"|"run"|"always", "reason"?}: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
      );
    const d = parsed.data;
    const pendingEntry = await read(key);
    // `always` and `run` mean what they say: a change to what a person wrote has no standing grant
    if (d.decision === "approve" && d.scope !== "once" && pendingEntry?.change)
      throw new ApprovalError(
        "APPROVAL_INVALID",
        `${key} is a change to ${pendingEntry.change.key}, which a person wrote: it is approved once (this change only), so --scope ${d.scope} does not apply. Approve it without --scope, or deny it`,
      );
    const answer = elicitAnswer(schemas, key, pendingEntry, d);
    const decision = {
      scope: d.scope,
      by,
      ...(via === undefined ? {} : { via }),
      ts: Date.now(),
      ...(d.reason ? { reason: d.reason } : {}),
      ...answer,
    };
    const entry = await settle(key, d.decision === "approve" ? "approved" : "denied", decision);
    if (d.decision === "approve" && !entry.change && !entry.elicitation) {
      const item = approvalFor(entry.tool, entry.decl?.hash);
      if (d.scope === "run") await addToList(runApprovalsKey(entry.vid), undefined, item);
      if (d.scope === "always") await addToList(POLICY_KEY, "approved", item);
    }
    return entry;
  }

  /**
   * Adds `item` to a JSON list (the whole value, or `field` of an object), read-only, forced: a
   * person's write. A hash-bound item replaces the same tool's earlier hash-bound ones (they lapsed).
   */
  async function addToList(key: string, field: string | undefined, item: string): Promise<void> {
    const { tool, hash } = parseStanding(item);
    for (let attempt = 0; attempt < 20; attempt++) {
      const node = await tree.get(key);
      const value = node?.kind === "json" ? node.value.value : field ? {} : [];
      const list = field ? (value as Record<string, Json>)[field] : value;
      const items = Array.isArray(list) ? (list as Json[]) : [];
      if (items.includes(item)) return;
      const kept =
        hash === undefined
          ? items
          : items.filter(
              (i) => typeof i !== "string" || parseStanding(i).tool !== tool || !parseStanding(i).hash,
            );
      const nextList = [...kept, item];
      const next = field ? { ...(value as Record<string, Json>), [field]: nextList } : nextList;
      try {
        await tree.set(key, json(next), {
          ifVersion: node && node.kind !== "index" ? node.version : 0,
          ro: true,
          force: true,
        });
        return;
      } catch (err) {
        if (!isTreeError(err, "TREE_VERSION_MISMATCH") && !isTreeError(err, "TREE_EXISTS")) throw err;
      }
    }
  }

  async function approvedForRun(vid: string, tool: string, hash?: string): Promise<boolean> {
    const node = await tree.get(runApprovalsKey(vid));
    if (node?.kind !== "json" || !Array.isArray(node.value.value)) return false;
    return node.value.value.some((i) => {
      if (typeof i !== "string") return false;
      const s = parseStanding(i);
      return s.tool === tool && (s.hash === undefined || s.hash === hash);
    });
  }

  async function awaitDecision(
    key: string,
    options: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<ApprovalOutcome> {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop.abort();
    }, options.timeoutMs);
    try {
      const node = await tree.get(key);
      let entry = node?.kind === "index" ? undefined : parseDoc(docs.approval, key, node);
      if (!node || !entry) return { key, approved: false, reason: "the approval entry is gone" };
      if (entry.state === "pending") {
        try {
          for await (const batch of tree.watch(key, { fromRev: node.modRev + 1, signal: stop.signal })) {
            const ev = batch.events.find((e) => e.key === key);
            if (!ev) continue;
            if (ev.type !== "put" || ev.value?.kind !== "json")
              return { key, approved: false, reason: "the approval entry was removed" };
            entry = parseDocValue(docs.approval, key, ev.value);
            if (entry.state !== "pending") break;
          }
        } catch (err) {
          if (!stop.signal.aborted) throw err;
        }
      }
      if (entry.state === "pending") {
        if (!timedOut)
          return { key, approved: false, reason: "the call was aborted while it waited for a person" };
        try {
          entry = await settle(key, "denied", {
            scope: "once",
            by: "byteseek",
            reason: "no answer",
            ts: Date.now(),
          });
        } catch (err) {
          // decided at the last moment: that decision stands
          if (!(err instanceof ApprovalError)) throw err;
          entry = (await read(key)) ?? entry;
        }
      }
      const why = entry.decision?.reason;
      return entry.state === "approved"
        ? { key, approved: true, scope: entry.decision?.scope ?? "once", reason: why ?? "approved" }
        : { key, approved: false, reason: why ?? "denied" };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  async function pending(limit = 200): Promise<Array<{ key: string; entry: ApprovalEntry }>> {
    const out: Array<{ key: string; entry: ApprovalEntry }> = [];
    let runs: Awaited<ReturnType<Tree["list"]>>;
    try {
      runs = await tree.list(APPROVAL_DIR, { limit: 1000 });
    } catch (err) {
      if (isTreeError(err, "TREE_NOT_FOUND")) return out;
      throw err;
    }
    for (const run of runs.children) {
      if (run.kind !== "index") continue;
      const dir = approvalDir(run.name.replace(/\/$/, ""));
      let after: string | undefined;
      do {
        const page = await tree.list(dir, { limit: 500, ...(after ? { after } : {}) });
        for (const c of page.children) {
          if (c.kind !== "json") continue;
          const key = `${dir}${c.name}`;
          const entry = c.value ? parseDocValue(docs.approval, key, c.value) : await read(key);
          if (!entry) continue;
          if (entry.state === "pending") out.push({ key, entry });
          if (out.length >= limit) return out;
        }
        after = page.next;
      } while (after);
    }
    return out;
  }

  return { requestApproval, awaitDecision, decide, read, pending, approvedForRun };
}
