/**
 * What every place that asks a person about an approval says — the terminal's question, the turn's
 * "decide with" line, `kvspace approvals`, the web page's card and buttons, an MCP host's question —
 * in one table, by the kind of approval. Each kind offers only the scopes that apply: a change to
 * what a person wrote is approved once (a standing grant for it makes no sense, and `decide` refuses
 * one), and `always` means what it says — this tool as declared now, until its declaration changes.
 *
 * No imports beyond types: the web page loads this file as it is.
 */
/** As tools/gate/approvals.ts declares it (kept here without its zod import: the web page loads this file). */
type ApprovalScope = "once" | "run" | "always";

/** The kinds of approval a person is asked for. */
export type ApprovalKind = "call" | "changed-call" | "person-change" | "rerun" | "elicitation";

/** What the wording reads of an approval (an entry, or a pending event). */
export interface ApprovalFacts {
  tool: string;
  vid?: string;
  /** For a change to what a person wrote: the key and whether it is a deletion. */
  change?: { key: string; action?: "set" | "del" };
  /** For a call of a declaration changed since a person approved it for good. */
  declDiff?: string;
  /** A resumed run's call interrupted with an unknown outcome, to run again (policy resumeUnknown: ask). */
  interrupted?: boolean;
  /** For a question an upstream MCP server asks during the call (its elicitation). */
  elicitation?: { server: string; message: string; schema?: Record<string, unknown> };
}

/** One scope as offered: its key on a terminal, its words, and what it covers. */
export interface ScopeOffer {
  scope: ApprovalScope;
  key: "y" | "r" | "a";
  /** A button's or a choice's label. */
  label: string;
  /** What it covers, in a sentence. */
  covers: string;
}

interface KindWording {
  scopes: readonly ApprovalScope[];
  /** The headline: what waits. */
  title(f: ApprovalFacts): string;
  /** The entry's `reason`: why it waits, for the person (never the model's text). */
  why(f: ApprovalFacts, rule: string): string;
}

const callScopes = ["once", "run", "always"] as const;

/** The table: one row per kind. */
export const APPROVAL_WORDING: Readonly<Record<ApprovalKind, KindWording>> = {
  call: {
    scopes: callScopes,
    title: (f) => `${f.tool} wants to run`,
    why: (f, rule) => `${f.tool} needs a person's approval (rule: ${rule})`,
  },
  "changed-call": {
    scopes: callScopes,
    title: (f) => `${f.tool} wants to run; its declaration changed since a person approved it for good`,
    why: (f, rule) =>
      `${f.tool} needs a person's approval again: its declaration changed since it was approved for good (rule: ${rule})`,
  },
  "person-change": {
    scopes: ["once"],
    title: (f) =>
      `${f.tool} wants to ${f.change?.action === "del" ? "delete" : "change"} ${f.change?.key ?? "a key"}, which a person wrote`,
    why: (f) =>
      `run ${f.vid ?? "?"} wants to ${f.change?.action === "del" ? "delete" : "change"} ${f.change?.key ?? "a key"}, which a person wrote: it is written as yours only if you approve`,
  },
  rerun: {
    scopes: callScopes,
    title: (f) => `${f.tool} was interrupted and wants to run again`,
    why: (f, rule) =>
      `${f.tool} was interrupted when the process running run ${f.vid ?? "?"} stopped during the call, so whether it took effect is unknown: it runs again only if you approve; denied, the model is told its outcome is unknown (rule: ${rule})`,
  },
  elicitation: {
    scopes: ["once"],
    title: (f) =>
      `The MCP server "${f.elicitation?.server ?? "?"}" asks (during ${f.tool}): ${f.elicitation?.message ?? ""}`,
    why: (f) =>
      `the MCP server "${f.elicitation?.server ?? "?"}" asks a question during ${f.tool} of run ${f.vid ?? "?"}: accept answers it with the form's content, deny declines (or cancels)`,
  },
};

/** The kind of an approval. */
export function approvalKind(f: ApprovalFacts): ApprovalKind {
  if (f.elicitation) return "elicitation";
  if (f.change) return "person-change";
  if (f.interrupted) return "rerun";
  if (f.declDiff) return "changed-call";
  return "call";
}

/** The scopes this approval may be given with, in the order they are offered. */
export function scopesFor(f: ApprovalFacts): ScopeOffer[] {
  return APPROVAL_WORDING[approvalKind(f)].scopes.map((scope) => scopeOffer(scope, f));
}

function scopeOffer(scope: ApprovalScope, f: ApprovalFacts): ScopeOffer {
  switch (scope) {
    case "once":
      if (f.elicitation)
        return { scope, key: "y", label: "Accept", covers: "sends the form's content to the server" };
      return {
        scope,
        key: "y",
        label: "Approve",
        covers: f.change ? "this change" : "this call, once",
      };
    case "run":
      return {
        scope,
        key: "r",
        label: "Approve for this run",
        covers: `${f.tool} as declared now, for the rest of run ${f.vid ?? "this run"}`,
      };
    case "always":
      return {
        scope,
        key: "a",
        label: "Approve always",
        covers: `${f.tool} as declared now, in every run, until its declaration changes (kept in policy.approved)`,
      };
  }
}

/** The headline of an approval (the page's card, the terminal's first line). */
export function approvalTitle(f: ApprovalFacts): string {
  return APPROVAL_WORDING[approvalKind(f)].title(f);
}

/** The reason kept in the entry: why it waits, in words for the person. */
export function approvalReason(f: ApprovalFacts, rule: string): string {
  return APPROVAL_WORDING[approvalKind(f)].why(f, rule);
}

/**
 * The terminal's question: one key each, no Enter, said in the question.
 * `approve edit.write? [y] once · [r] for this run · [a] always (this declaration) · [n] no (one key, no Enter) `
 */
export function terminalQuestion(f: ApprovalFacts): string {
  if (f.elicitation)
    return `answer the MCP server "${f.elicitation.server}"? [y] accept${hasFields(f.elicitation.schema) ? " (then fill in its form)" : " (an empty form)"} · [n] decline · [c] cancel (one key, no Enter) `;
  const offers = scopesFor(f).map((o) => {
    if (o.scope === "once") return f.change ? "[y] yes" : "[y] once";
    if (o.scope === "run") return "[r] for this run";
    return "[a] always (as declared now)";
  });
  const what = f.change ? `${f.change.action === "del" ? "delete" : "change"} ${f.change.key}` : f.tool;
  return `approve ${what}? ${[...offers, "[n] no"].join(" · ")} (one key, no Enter) `;
}

/** Whether an upstream's form has fields to fill in. */
function hasFields(schema: Record<string, unknown> | undefined): boolean {
  const props = schema?.properties;
  return typeof props === "object" && props !== null && Object.keys(props).length > 0;
}

/** The keys a terminal takes for this approval, and the decision each stands for. */
export function terminalKeys(f: ApprovalFacts): Map<string, ApprovalScope | "deny" | "cancel"> {
  const keys = new Map<string, ApprovalScope | "deny" | "cancel">();
  for (const o of scopesFor(f)) keys.set(o.key, o.scope);
  keys.set("n", "deny");
  if (f.elicitation) keys.set("c", "cancel");
  return keys;
}

/** The command line that decides it from another shell. */
export function decideLine(id: string, f: ApprovalFacts): string {
  if (f.elicitation) return `kvspace approve ${id} --content '{…}'  |  kvspace deny ${id} [--cancel]`;
  const scopes = APPROVAL_WORDING[approvalKind(f)].scopes;
  const scope = scopes.length > 1 ? ` [--scope ${scopes.join("|")}]` : "";
  return `kvspace approve ${id}${scope}  |  kvspace deny ${id}`;
}
