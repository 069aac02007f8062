import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { openTree } from "../../tree/index.js";
import { json, str } from "../../tree/value.js";
import { silent, tempDir } from "../tools/helpers.js";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

async function setup(): Promise<Byteseek> {
  const dir = await tempDir("byteseek-prompt-");
  cleanup.push(() => dir.remove());
  const workspace = join(dir.path, "ws");
  await mkdir(workspace);
  const tree = await openTree({ backend: "memory" });
  cleanup.push(() => tree.close());
  const bs = await createByteseek({ tree, workspace, logger: silent, env: {} });
  cleanup.push(() => bs.close());
  return bs;
}

const decl = (name: string, extra: Record<string, unknown> = {}) =>
  json({
    name,
    description: `the ${name} tool`,
    snippet: `${name} — a test tool`,
    params: { type: "object", properties: {} },
    impl: { kind: "builtin", ref: "edit.read" },
    ...extra,
  });

describe("buildPrompt", () => {
  it("lists every enabled, valid tool with a snippet, sorted, and sends exactly those schemas", async () => {
    const bs = await setup();
    await bs.tree.set("/byteseek/tools/zz.last", decl("zz.last"));
    await bs.tree.set("/byteseek/tools/aa.first", decl("aa.first"));
    await bs.tree.set("/byteseek/tools/aa.off", decl("aa.off", { enabled: false }));
    const quiet = decl("aa.quiet");
    delete (quiet.value as { snippet?: string }).snippet;
    await bs.tree.set("/byteseek/tools/aa.quiet", quiet);
    // an invalid declaration gets into the tree only when a writer says unchecked
    await bs.tree.set("/byteseek/tools/aa.broken", json({ name: "aa.broken" }), { unchecked: true });
    const p = await bs.prompt("v1");
    const names = p.tools.map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names[0]).toBe("aa.first");
    expect(names.at(-1)).toBe("zz.last");
    for (const hidden of ["aa.off", "aa.quiet", "aa.broken"]) {
      expect(names).not.toContain(hidden);
      expect(p.system).not.toContain(hidden);
    }
    const listed = p.system.split("\n").filter((l) => /^- [a-z]+\.[a-z_-]+: /.test(l));
    expect(listed.map((l) => l.slice(2, l.indexOf(":")))).toEqual(names);
  });

  it("gives each guideline of the offered tools once", async () => {
    const bs = await setup();
    const shared = "Shared advice for both tools.";
    await bs.tree.set("/byteseek/tools/g.one", decl("g.one", { guidelines: [shared, "Only one."] }));
    await bs.tree.set("/byteseek/tools/g.two", decl("g.two", { guidelines: [shared] }));
    await bs.tree.set(
      "/byteseek/tools/g.off",
      decl("g.off", { guidelines: ["Hidden advice."], enabled: false }),
    );
    const { system } = await bs.prompt("v1");
    expect(system.split(`- ${shared}`)).toHaveLength(2);
    expect(system).toContain("- Only one.");
    expect(system).not.toContain("Hidden advice.");
  });

  it("recalls memory entries matching the input, and sees a new entry at once", async () => {
    const bs = await setup();
    await bs.tree.set("/byteseek/memory/deploy", str("run make release"));
    await bs.tree.set("/byteseek/memory/colour", str("the user likes blue"));
    const first = await bs.prompt("v1", "how do I deploy?");
    expect(first.system).toContain("[relevant memory]\ndeploy = run make release");
    expect(first.system).not.toContain("colour =");
    expect((await bs.prompt("v1", "")).system).not.toContain("[relevant memory]");

    await bs.tree.set("/byteseek/memory/i deploy", str("never on fridays"));
    const second = await bs.prompt("v1", "how do I deploy?");
    expect(second.system).toContain("i deploy = never on fridays");
    expect((await bs.prompt("v1", "BLUE")).system).toContain("colour = the user likes blue");
  });

  it("a declaration written or deleted shows in the very next build", async () => {
    const bs = await setup();
    expect((await bs.prompt("v1")).tools.map((t) => t.name)).not.toContain("new.tool");
    await bs.tree.set("/byteseek/tools/new.tool", decl("new.tool"));
    expect((await bs.prompt("v1")).tools.map((t) => t.name)).toContain("new.tool");
    await bs.tree.del("/byteseek/tools/new.tool");
    expect((await bs.prompt("v1")).tools.map((t) => t.name)).not.toContain("new.tool");
  });

  it("never overwrites a prompt a user edited when seeding again", async () => {
    const bs = await setup();
    await bs.tree.set("/byteseek/prompt/system", str("Mine. {{tools}}"));
    await createByteseek({ tree: bs.tree, workspace: bs.runtime.workspace, logger: silent, env: {} });
    expect((await bs.prompt("v1")).system.startsWith("Mine. ")).toBe(true);
  });
});
