import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SHIPPED_DIR, seedTools } from "../../tools/catalogue/seed.js";
import { defaultPolicy, POLICY_KEY } from "../../tools/gate/policy.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import type { BuiltinTool } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { json } from "../../tree/value.js";
import { tempDir, testBuiltins } from "./helpers.js";

/** The same builtins as a newer byteseek would ship them: every description changed. */
function upgraded(builtins: BuiltinTool[]): BuiltinTool[] {
  return builtins.map((b) => ({
    ...b,
    declaration: { ...b.declaration, description: `${b.declaration.description} (v2)` },
  }));
}

async function declarationOf(tree: Tree, name: string): Promise<Record<string, unknown> | undefined> {
  const node = await tree.get(`/byteseek/tools/${name}`);
  return node?.kind === "json" ? (node.value.value as Record<string, unknown>) : undefined;
}

describe("seedTools", () => {
  let tree: Tree;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const v1 = [...testBuiltins(), ...createTreeTools()];
  beforeEach(async () => {
    dir = await tempDir("byteseek-seed-");
    tree = await openTree({ backend: "classic", location: dir.path });
  });
  afterEach(async () => {
    await tree.close();
    await dir.remove();
  });

  it("writes every shipped declaration and the read-only default policy at first start", async () => {
    const report = await seedTools({ tree, builtins: v1 });
    expect(report.written.sort()).toEqual(v1.map((b) => b.declaration.name).sort());
    expect(report.policyWritten).toBe(true);
    expect(await declarationOf(tree, "tree.get")).toEqual(v1.find((b) => b.ref === "tree.get")?.declaration);
    const policy = await tree.get(POLICY_KEY);
    expect(policy?.ro).toBe(true);
    expect(policy?.kind === "json" && policy.value.value).toEqual(defaultPolicy());
    expect((await tree.list("/byteseek/tools/")).children.map((c) => c.name)).not.toContain("‥shipped/");
    expect((await tree.list(SHIPPED_DIR)).children).toHaveLength(v1.length);
  });

  it("changes nothing when started again with the same version", async () => {
    await seedTools({ tree, builtins: v1 });
    const rev = tree.revision();
    const report = await seedTools({ tree, builtins: v1 });
    expect(report.unchanged).toHaveLength(v1.length);
    expect(report.policyWritten).toBe(false);
    expect(tree.revision()).toBe(rev);
  });

  it("on upgrade, updates untouched entries and keeps the ones a user or an agent changed or deleted", async () => {
    await seedTools({ tree, builtins: v1 });
    const userEdit = { ...(await declarationOf(tree, "tree.get")), description: "mine" };
    await tree.set("/byteseek/tools/tree.get", json(userEdit));
    const agentEdit = { ...(await declarationOf(tree, "tree.list")), enabled: false };
    await tree.set("/byteseek/tools/tree.list", json(agentEdit), { vid: "agent-7" });
    await tree.del("/byteseek/tools/tree.del");
    await tree.set(POLICY_KEY, json({ agentImpls: ["shell"] }), { force: true });

    const report = await seedTools({ tree, builtins: upgraded(v1) });
    expect(report.kept.sort()).toEqual(["tree.del", "tree.get", "tree.list"]);
    expect(report.updated).toContain("tree.set");
    expect(report.updated).toContain("test.noop");
    expect(await declarationOf(tree, "tree.get")).toEqual(userEdit);
    expect(await declarationOf(tree, "tree.list")).toEqual(agentEdit);
    expect(await declarationOf(tree, "tree.del")).toBeUndefined();
    expect((await declarationOf(tree, "tree.set"))?.description).toMatch(/\(v2\)$/);
    const policy = await tree.get(POLICY_KEY);
    expect(policy?.kind === "json" && policy.value.value).toEqual({ agentImpls: ["shell"] });

    // A second upgrade still treats the updated entries as untouched, and the edited ones as edited.
    const again = await seedTools({ tree, builtins: upgraded(upgraded(v1)) });
    expect(again.updated).toContain("tree.set");
    expect(again.kept.sort()).toEqual(["tree.del", "tree.get", "tree.list"]);
  });

  it("keeps an entry someone wrote before byteseek first seeded it", async () => {
    const custom = { ...v1[0]!.declaration, description: "written before the first start" };
    await tree.set(`/byteseek/tools/${custom.name}`, json(custom as never));
    const report = await seedTools({ tree, builtins: v1 });
    expect(report.kept).toEqual([custom.name]);
    expect(await declarationOf(tree, custom.name)).toEqual(custom);
  });

  it("starts with a damaged shipped marker, keeping its declaration as someone's change", async () => {
    await seedTools({ tree, builtins: v1 });
    await tree.set(`${SHIPPED_DIR}tree.get`, json(null));
    const report = await seedTools({ tree, builtins: upgraded(v1) });
    expect(report.kept).toEqual(["tree.get"]);
    expect(report.updated).toContain("tree.set");
    expect((await declarationOf(tree, "tree.get"))?.description).not.toMatch(/\(v2\)$/);
  });

  it("refuses to start with a shipped declaration that does not parse", async () => {
    const broken = [{ ...v1[0]!, declaration: { ...v1[0]!.declaration, name: "NoDot" } }];
    await expect(seedTools({ tree, builtins: broken })).rejects.toThrow(/NoDot/);
  });

  it("checks a shipped declaration where it writes one: one stored as shipped is not parsed again at each start, its upgrade is", async () => {
    const broken = [{ ...v1[0]!, declaration: { ...v1[0]!.declaration, name: "NoDot" } }];
    // as a store written by this version holds it (the check would refuse it: it is not parsed)
    await tree.set("/byteseek/tools/NoDot", json(broken[0]!.declaration as never));
    const report = await seedTools({ tree, builtins: broken });
    expect(report.unchanged).toEqual(["NoDot"]);
    await expect(seedTools({ tree, builtins: upgraded(broken) })).rejects.toThrow(/NoDot/);
  });
});
