/**
 * Tools runs declare (issue 33, item 4): bounded in count and bytes per run, and offered to other
 * runs only once a person accepts the version they see — unless the policy shares them at once.
 */
import { describe, expect, it } from "vitest";
import { acceptAgentTool } from "../../tools/catalogue/agent-tools.js";
import { defaultPolicy } from "../../tools/gate/policy.js";
import { json } from "../../tree/value.js";
import { setPolicy, useHarness } from "./helpers.js";

/** A run's own alias of tree.get: powers every run holds, nothing to sandbox. */
const getter = (name: string, description = "read a tree key") => ({
  name,
  description,
  snippet: `${name}(key) — ${description}`,
  params: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  impl: { kind: "builtin", ref: "tree.get" },
});

describe("tools runs declare", () => {
  const h = useHarness();
  const call = (name: string, args: unknown, vid: string) => h.runtime.call(name, args, { vid });
  const declare = (decl: Record<string, unknown>, vid: string) =>
    call("tree.set", { key: `/byteseek/tools/${decl.name as string}`, value: decl }, vid);
  const offered = async (name: string, vid: string) =>
    (await h.runtime.listTools(vid)).valid.find((t) => t.name === name);

  it("are offered to other runs only once a person accepts that version; a change needs accepting again", async () => {
    await h.tree.set("/notes/a", { kind: "char/utf8", value: "hello" } as never);
    expect((await declare(getter("my.get"), "author")).kind).toBe("ok");
    // the declaring run uses it at once
    expect((await call("my.get", { key: "/notes/a" }, "author")).kind).toBe("ok");
    expect((await offered("my.get", "author"))?.blocked).toBeUndefined();
    // another run is neither offered it nor able to call it
    expect((await offered("my.get", "other"))?.blocked).toContain("kvspace tools accept my.get");
    const refused = await call("my.get", { key: "/notes/a" }, "other");
    expect(refused).toMatchObject({
      kind: "denied",
      details: { code: "held_for_review", rule: "agentTools.share" },
    });
    expect(refused.text).toContain("declared by run author");

    const accepted = await acceptAgentTool(h.tree, "my.get", { by: "person (test)" });
    expect(accepted).toMatchObject({ name: "my.get", owner: "author" });
    expect((await offered("my.get", "other"))?.blocked).toBeUndefined();
    expect((await call("my.get", { key: "/notes/a" }, "other")).kind).toBe("ok");
    // an acceptance that does not read as one accepts nothing, and the listing still answers
    await h.tree.set("/byteseek/tool-accept/my.get", json({ hash: 7 }));
    expect((await offered("my.get", "other"))?.blocked).toContain("kvspace tools accept my.get");
    await acceptAgentTool(h.tree, "my.get", { by: "person (test)" });

    // the run changes it: held from others again until accepted anew, and a stale review is refused
    expect((await declare(getter("my.get", "read a key, then send it away"), "author")).kind).toBe("ok");
    expect((await call("my.get", { key: "/notes/a" }, "other")).details.code).toBe("held_for_review");
    await expect(
      acceptAgentTool(h.tree, "my.get", { by: "person (test)", hash: accepted.hash }),
    ).rejects.toMatchObject({ code: "AGENT_TOOL_STALE" });
    // a run cannot accept it for itself
    const forged = await call(
      "tree.set",
      { key: "/byteseek/tool-accept/my.get", value: { hash: "x" } },
      "author",
    );
    expect(forged.kind).toBe("denied");

    // the policy may share runs' tools at once
    await setPolicy(h.tree, {
      ...defaultPolicy(),
      agentTools: { ...defaultPolicy().agentTools, share: "at-once" },
    });
    expect((await call("my.get", { key: "/notes/a" }, "other")).kind).toBe("ok");
  });

  it("are bounded per run in count and bytes, the refusal saying what to do; changing one's own tool still fits", async () => {
    await setPolicy(h.tree, {
      ...defaultPolicy(),
      agentTools: { share: "accepted", maxPerRun: 2, maxBytesPerRun: 700 },
    });
    expect((await declare(getter("a.one"), "busy")).kind).toBe("ok");
    expect((await declare(getter("a.two"), "busy")).kind).toBe("ok");
    const third = await declare(getter("a.three"), "busy");
    expect(third).toMatchObject({ kind: "denied", details: { code: "catalogue_full", count: 2 } });
    expect(third.text).toContain("agentTools.maxPerRun");
    expect(third.text).toContain("tree.del /byteseek/tools/<name>");
    expect(await h.tree.get("/byteseek/tools/a.three")).toBeUndefined();
    // a change to one's own declaration counts once; another run has its own room
    expect((await declare(getter("a.two", "read a tree key, again"), "busy")).kind).toBe("ok");
    expect((await declare(getter("b.one"), "calm")).kind).toBe("ok");
    const big = await declare(getter("b.two", "x".repeat(150)), "calm");
    expect(big).toMatchObject({ kind: "denied", details: { code: "catalogue_full" } });
    expect(big.text).toContain("agentTools.maxBytesPerRun");
  });
});
