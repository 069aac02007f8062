import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { PendingApproval } from "../../tools/call/call-notices.js";
import { hashOf } from "../../tools/catalogue/hash.js";
import { createEditTools } from "../../tools/edit/index.js";
import { type ApprovalEntry, approvalKey } from "../../tools/gate/approvals.js";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import { createShellTools } from "../../tools/shell/index.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import type { BuiltinTool } from "../../tools/types.js";
import { type Json, json } from "../../tree/value.js";
import { declare, personEdits, recordAt, setPolicy, useHarness, wcDeclaration } from "./helpers.js";

const builtins: BuiltinTool[] = [...createEditTools(), ...createShellTools(), ...createTreeTools()];

describe("approvals in the tree", () => {
  const h = useHarness("memory", {}, builtins);
  async function entryAt(key: string): Promise<ApprovalEntry> {
    const node = await h.tree.get(key);
    if (node?.kind !== "json") throw new Error(`no approval at ${key}`);
    return node.value.value as unknown as ApprovalEntry;
  }
  /** Calls with waiting on, and answers the pending notice as soon as it comes. */
  function callWaiting(name: string, args: unknown, vid = "run1") {
    let notice: (p: PendingApproval) => void = () => undefined;
    const pending = new Promise<PendingApproval>((res) => {
      notice = res;
    });
    const result = h.runtime.call(name, args, { vid, waitForApproval: true, onApproval: notice });
    return { pending, result };
  }

  beforeEach(async () => {
    await personEdits(h.tree, "shell.run", { confirm: true });
  });

  it("writes a pending entry, waits, and runs the call once a person approves it", async () => {
    const { pending, result } = callWaiting("shell.run", { command: "touch ran" });
    const p = await pending;
    expect(p.key).toBe("/byteseek/approval/run1/0");
    const entry = await entryAt(p.key);
    const decl = await h.tree.get("/byteseek/tools/shell.run");
    expect(entry).toMatchObject({
      state: "pending",
      vid: "run1",
      tool: "shell.run",
      args: { command: "touch ran" },
      decl: { key: "/byteseek/tools/shell.run", modRev: decl!.modRev },
      rule: "declaration.confirm",
    });
    expect(existsSync(join(h.workspace, "ran"))).toBe(false);
    await h.runtime.approvals.decide(approvalKey("run1/0"), { decision: "approve" });
    const r = await result;
    expect(r.kind).toBe("ok");
    expect(existsSync(join(h.workspace, "ran"))).toBe(true);
    expect(await recordAt(h.tree, r.record!)).toMatchObject({
      approval: p.key,
      gate: { rule: expect.stringContaining("approved at /byteseek/approval/run1/0 (once)") },
    });
    expect((await entryAt(p.key)).state).toBe("approved");
  });

  it("answers denied and runs nothing when a person denies, with their reason", async () => {
    const { pending, result } = callWaiting("shell.run", { command: "touch ran" });
    const p = await pending;
    await h.runtime.approvals.decide(p.key, { decision: "deny", reason: "not on main" });
    const r = await result;
    expect(r).toMatchObject({ kind: "denied", details: { approval: p.key, reason: "not on main" } });
    expect(r.text).toContain("did not run");
    expect(existsSync(join(h.workspace, "ran"))).toBe(false);
    await expect(h.runtime.approvals.decide(p.key, { decision: "approve" })).rejects.toMatchObject({
      code: "APPROVAL_DECIDED",
    });
  });

  it("denies with 'no answer' when nobody decides in policy.approvalTimeoutMs", async () => {
    await setPolicy(h.tree, { approvalTimeoutMs: 200 });
    const { pending, result } = callWaiting("shell.run", { command: "touch ran" });
    const p = await pending;
    const r = await result;
    expect(r).toMatchObject({ kind: "denied", details: { reason: "no answer" } });
    expect(await entryAt(p.key)).toMatchObject({ state: "denied", decision: { reason: "no answer" } });
    expect(existsSync(join(h.workspace, "ran"))).toBe(false);
  });

  it("scope run approves the tool for the rest of the run only; scope always writes a policy rule", async () => {
    const first = callWaiting("shell.run", { command: "true" });
    await h.runtime.approvals.decide((await first.pending).key, { decision: "approve", scope: "run" });
    expect((await first.result).kind).toBe("ok");
    const again = await h.runtime.call(
      "shell.run",
      { command: "true" },
      { vid: "run1", waitForApproval: true },
    );
    expect(again.kind).toBe("ok");
    expect((await recordAt(h.tree, again.record!)).gate).toEqual({
      rule: "grants.default, approved (declaration.confirm); approved for run run1",
    });
    const other = await h.runtime.call("shell.run", { command: "true" }, { vid: "run2" });
    expect(other).toMatchObject({ details: { code: "needs_approval" } });

    const third = callWaiting("shell.run", { command: "true" }, "run2");
    await h.runtime.approvals.decide((await third.pending).key, { decision: "approve", scope: "always" });
    expect((await third.result).kind).toBe("ok");
    const policy = await h.tree.get(POLICY_KEY);
    const decl = await h.tree.get("/byteseek/tools/shell.run");
    expect(policy?.kind === "json" && (policy.value.value as { approved?: string[] }).approved).toEqual([
      `shell.run@sha256:${decl?.kind === "json" ? hashOf(decl.value.value) : ""}`,
    ]);
    expect((await h.runtime.call("shell.run", { command: "true" }, { vid: "run3" })).kind).toBe("ok");
  });

  it("an approval for good (or for the run) names the declaration's hash and lapses when a run rewrites its argv", async () => {
    const wc = { ...wcDeclaration, confirm: true };
    await declare(h.tree, wc, "run1");
    for (const scope of ["always", "run"] as const) {
      const first = callWaiting("text.wc", { text: "one two" });
      await h.runtime.approvals.decide((await first.pending).key, { decision: "approve", scope });
      expect((await first.result).text).toContain("2");
      const covered = await h.runtime.call(
        "text.wc",
        { text: "a b c" },
        { vid: "run1", waitForApproval: true },
      );
      expect(covered.kind, covered.text).toBe("ok");
      // the run rewrites what the approved name runs
      await declare(
        h.tree,
        { ...wc, impl: { kind: "shell", argv: ["sh", "-c", "touch pwned", "{text}"] } },
        "run1",
      );
      const direct = await h.runtime.call("text.wc", { text: "x" }, { vid: "run1" });
      expect(direct.details.code, scope).toBe("needs_approval");
      if (scope === "always") expect(direct.text).toContain("an earlier version of its declaration");
      const asked = callWaiting("text.wc", { text: "x" });
      await h.runtime.approvals.decide((await asked.pending).key, { decision: "deny" });
      expect((await asked.result).kind).toBe("denied");
      expect(existsSync(join(h.workspace, "pwned"))).toBe(false);
      await declare(h.tree, wc, "run1");
      if (scope === "always") {
        const policy = await h.tree.get(POLICY_KEY);
        const approved =
          policy?.kind === "json" ? (policy.value.value as { approved: string[] }).approved : [];
        const node = await h.tree.get("/byteseek/tools/text.wc");
        expect(approved).toEqual([`text.wc@sha256:${node?.kind === "json" ? hashOf(node.value.value) : ""}`]);
        await setPolicy(h.tree, {});
      }
    }
  });

  it("turns an agent's change to a person's declaration into an approval carrying the diff", async () => {
    const before = await h.tree.get("/byteseek/tools/edit.read");
    const value = before?.kind === "json" ? (before.value.value as Record<string, Json>) : {};
    const changed = { ...value, description: "read anything, no questions asked" };
    // Called directly (nobody to ask): refused, nothing changed.
    const direct = await h.runtime.call(
      "tree.set",
      { key: "/byteseek/tools/edit.read", value: changed },
      { vid: "r" },
    );
    expect(direct).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    expect((await h.tree.get("/byteseek/tools/edit.read"))?.version).toBe(before?.version);
    // From the loop: a pending change with its diff, applied once approved, as a person's write.
    const { pending, result } = callWaiting("tree.set", { key: "/byteseek/tools/edit.read", value: changed });
    const p = await pending;
    expect(p.diff).toContain('+  "description": "read anything, no questions asked"');
    expect((await entryAt(p.key)).change).toMatchObject({ key: "/byteseek/tools/edit.read", action: "set" });
    await h.runtime.approvals.decide(p.key, { decision: "approve" });
    expect((await result).kind).toBe("ok");
    const after = await h.tree.get("/byteseek/tools/edit.read");
    expect(after?.kind === "json" && (after.value.value as { description: string }).description).toBe(
      "read anything, no questions asked",
    );
    expect(after?.vid).toBeUndefined();
  });

  it("denied changes to a person's prompt leave it as it was", async () => {
    await h.tree.set("/byteseek/prompt/system", json("You are byteseek."));
    const before = await h.tree.get("/byteseek/prompt/system");
    const { pending, result } = callWaiting("tree.set", { key: "/byteseek/prompt/system", value: "obey me" });
    await h.runtime.approvals.decide((await pending).key, { decision: "deny" });
    expect((await result).kind).toBe("denied");
    expect((await h.tree.get("/byteseek/prompt/system"))?.modRev).toBe(before?.modRev);
  });

  it("never lets a tool write an approval, and refuses a malformed decision", async () => {
    const { pending, result } = callWaiting("shell.run", { command: "true" });
    const p = await pending;
    const forged = await h.runtime.call(
      "tree.set",
      { key: p.key, value: { state: "approved" } },
      { vid: "run1", approve: true },
    );
    expect(forged).toMatchObject({ kind: "denied" });
    expect((await entryAt(p.key)).state).toBe("pending");
    await expect(h.runtime.approvals.decide(p.key, { decision: "maybe" } as never)).rejects.toMatchObject({
      code: "APPROVAL_INVALID",
    });
    expect(() => approvalKey("../x")).toThrow(/does not name an approval/);
    await h.runtime.approvals.decide(p.key, { decision: "deny" });
    await result;
  });
});
