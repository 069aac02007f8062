import { describe, expect, it } from "vitest";
import {
  APPROVAL_WORDING,
  type ApprovalFacts,
  approvalKind,
  approvalReason,
  approvalTitle,
  decideLine,
  scopesFor,
  terminalKeys,
  terminalQuestion,
} from "../../tools/gate/approval-wording.js";

const call: ApprovalFacts = { tool: "shell.run", vid: "r1" };
const changed: ApprovalFacts = { tool: "text.wc", vid: "r1", declDiff: "-a\n+b\n" };
const rerun: ApprovalFacts = { tool: "shell.run", vid: "r1", interrupted: true };
const change: ApprovalFacts = {
  tool: "tree.set",
  vid: "r1",
  change: { key: "/byteseek/tools/notes.find", action: "set" },
};

const question: ApprovalFacts = {
  tool: "github.create_issue",
  vid: "r1",
  elicitation: { server: "github", message: "Which repository?" },
};

/** Every kind, as every place that asks a person words it. */
const TABLE: Array<[ApprovalFacts, Record<string, unknown>]> = [
  [
    call,
    {
      kind: "call",
      title: "shell.run wants to run",
      reason: "shell.run needs a person's approval (rule: declaration.confirm)",
      scopes: ["once", "run", "always"],
      question:
        "approve shell.run? [y] once · [r] for this run · [a] always (as declared now) · [n] no (one key, no Enter) ",
      keys: ["y", "r", "a", "n"],
      decide: "kvspace approve r1/0 [--scope once|run|always]  |  kvspace deny r1/0",
    },
  ],
  [
    changed,
    {
      kind: "changed-call",
      title: "text.wc wants to run; its declaration changed since a person approved it for good",
      reason:
        "text.wc needs a person's approval again: its declaration changed since it was approved for good (rule: declaration.confirm)",
      scopes: ["once", "run", "always"],
      question:
        "approve text.wc? [y] once · [r] for this run · [a] always (as declared now) · [n] no (one key, no Enter) ",
      keys: ["y", "r", "a", "n"],
      decide: "kvspace approve r1/0 [--scope once|run|always]  |  kvspace deny r1/0",
    },
  ],
  [
    change,
    {
      kind: "person-change",
      title: "tree.set wants to change /byteseek/tools/notes.find, which a person wrote",
      reason:
        "run r1 wants to change /byteseek/tools/notes.find, which a person wrote: it is written as yours only if you approve",
      scopes: ["once"],
      question: "approve change /byteseek/tools/notes.find? [y] yes · [n] no (one key, no Enter) ",
      keys: ["y", "n"],
      decide: "kvspace approve r1/0  |  kvspace deny r1/0",
    },
  ],
  [
    rerun,
    {
      kind: "rerun",
      title: "shell.run was interrupted and wants to run again",
      reason:
        "shell.run was interrupted when the process running run r1 stopped during the call, so whether it took effect is unknown: it runs again only if you approve; denied, the model is told its outcome is unknown (rule: declaration.confirm)",
      scopes: ["once", "run", "always"],
      question:
        "approve shell.run? [y] once · [r] for this run · [a] always (as declared now) · [n] no (one key, no Enter) ",
      keys: ["y", "r", "a", "n"],
      decide: "kvspace approve r1/0 [--scope once|run|always]  |  kvspace deny r1/0",
    },
  ],
  [
    question,
    {
      kind: "elicitation",
      title: 'The MCP server "github" asks (during github.create_issue): Which repository?',
      reason:
        'the MCP server "github" asks a question during github.create_issue of run r1: accept answers it with the form\'s content, deny declines (or cancels)',
      scopes: ["once"],
      question:
        'answer the MCP server "github"? [y] accept (an empty form) · [n] decline · [c] cancel (one key, no Enter) ',
      keys: ["y", "n", "c"],
      decide: "kvspace approve r1/0 --content '{…}'  |  kvspace deny r1/0 [--cancel]",
    },
  ],
];

describe("the approval wording table", () => {
  it.each(TABLE)("words each kind the same way everywhere, offering only its scopes (%#)", (facts, want) => {
    expect({
      kind: approvalKind(facts),
      title: approvalTitle(facts),
      reason: approvalReason(facts, "declaration.confirm"),
      scopes: scopesFor(facts).map((s) => s.scope),
      question: terminalQuestion(facts),
      keys: [...terminalKeys(facts).keys()],
      decide: decideLine("r1/0", facts),
    }).toEqual(want);
  });

  it("never says nobody could be asked while asking, and 'always' says it lasts only while the declaration stays", () => {
    for (const [facts] of TABLE) {
      const words = [approvalTitle(facts), approvalReason(facts, "r"), terminalQuestion(facts)].join(" ");
      expect(words).not.toMatch(/none could be asked|cannot ask/);
      const always = scopesFor(facts).find((s) => s.scope === "always");
      if (always) expect(always.covers).toContain("until its declaration changes");
    }
    expect(Object.keys(APPROVAL_WORDING).sort()).toEqual([
      "call",
      "changed-call",
      "elicitation",
      "person-change",
      "rerun",
    ]);
  });

  it("maps each key to the decision it stands for", () => {
    expect(Object.fromEntries(terminalKeys(call))).toEqual({ y: "once", r: "run", a: "always", n: "deny" });
    expect(Object.fromEntries(terminalKeys(change))).toEqual({ y: "once", n: "deny" });
    expect(Object.fromEntries(terminalKeys(question))).toEqual({ y: "once", n: "deny", c: "cancel" });
  });
});
