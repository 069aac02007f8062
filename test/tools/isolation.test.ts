import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createEditTools } from "../../tools/edit/index.js";
import { createRuntime } from "../../tools/runtime.js";
import { createShellTools } from "../../tools/shell/index.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import type { BuiltinTool } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import { json, str } from "../../tree/value.js";
import { personEdits, setPolicy, silent, tempDir, useHarness } from "./helpers.js";

const builtins: BuiltinTool[] = [...createEditTools(), ...createShellTools(), ...createTreeTools()];

describe("every rule applies everywhere", () => {
  const h = useHarness("memory", {}, builtins);
  let extra: Awaited<ReturnType<typeof tempDir>>;
  const call = (name: string, args: unknown, vid = "r1") => h.runtime.call(name, args, { vid });

  beforeEach(async () => {
    extra = await tempDir("byteseek-iso-extra-");
    // The search and move tools ship switched off: a person switches them on.
    for (const name of ["edit.grep", "edit.glob", "edit.ls", "edit.rename"])
      await personEdits(h.tree, name, { enabled: true });
    await mkdir(join(h.workspace, "src", "secrets"), { recursive: true });
    await writeFile(join(h.workspace, "src", "secrets", "key.txt"), "TOKEN=hunter2\n");
    await writeFile(join(h.workspace, "src", "app.txt"), "TOKEN=public\n");
    await setPolicy(h.tree, { deny: ["src/secrets"] });
  });
  afterEach(async () => {
    await extra.remove();
  });

  it("grep, glob and ls on a parent skip what deny names", async () => {
    const grep = await call("edit.grep", { pattern: "TOKEN", path: "src" });
    expect(grep.kind).toBe("ok");
    expect(grep.text).toContain("app.txt");
    expect(grep.text).not.toContain("hunter2");
    const glob = await call("edit.glob", { pattern: "**/*.txt" });
    expect(glob.text).toContain("src/app.txt");
    expect(glob.text).not.toContain("key.txt");
    const ls = await call("edit.ls", { path: "src" });
    expect(ls.text).toContain("app.txt");
    expect(ls.text).not.toContain("secrets");
  });

  it("rename refuses to move a denied folder's ancestor, so nothing denied becomes readable elsewhere", async () => {
    const moved = await call("edit.rename", { from: "src", to: "open" });
    expect(moved).toMatchObject({ kind: "denied", details: { rule: "deny[0] (src/secrets)" } });
    const read = await call("edit.read", { path: "open/secrets/key.txt" });
    expect(read.text).not.toContain("hunter2");
    expect((await call("edit.rename", { from: "src/app.txt", to: "app.txt" })).kind).toBe("ok");
  });

  it("workspaceRoots extend the roots the file tools accept", async () => {
    await writeFile(join(extra.path, "notes.txt"), "from the extra root\n");
    const before = await call("edit.read", { path: join(extra.path, "notes.txt") });
    expect(before.kind).toBe("denied");
    await setPolicy(h.tree, { workspaceRoots: [extra.path] });
    const after = await call("edit.read", { path: join(extra.path, "notes.txt") });
    expect(after.kind).toBe("ok");
    expect(after.text).toContain("from the extra root");
    expect((await call("edit.write", { path: join(extra.path, "new.txt"), text: "x" })).kind).toBe("ok");
  });

  it("tree.list never shows the policy or a denied key's value", async () => {
    await h.tree.set("/byteseek/llm/key", str("sk-secret"));
    await h.tree.set("/cfg/token", str("t0ken"));
    await setPolicy(h.tree, { denyKeys: ["/byteseek/llm/", "/cfg/token"] });
    const byteseek = await call("tree.list", { key: "/byteseek/" });
    expect(byteseek.kind).toBe("ok");
    expect(byteseek.text).not.toMatch(/^policy\t/m);
    expect(byteseek.text).not.toMatch(/^llm/m);
    expect(byteseek.text).toContain("tools/");
    const cfg = await call("tree.list", { key: "/cfg/" });
    expect(cfg.text).not.toContain("t0ken");
    expect((await call("tree.get", { key: "/cfg/token" })).kind).toBe("denied");
  });
});

describe("the embedded store inside the workspace", () => {
  it("is never read, listed, searched, written or moved by a file tool, whatever the policy says", async () => {
    const ws = await tempDir("byteseek-store-ws-");
    const tree = await openTree({ backend: "memory" });
    await seedTools({ tree, builtins });
    const store = join(ws.path, "data");
    await mkdir(store);
    await writeFile(join(store, "000001.log"), "/byteseek/llm/key sk-secret\n");
    await writeFile(join(ws.path, "notes.txt"), "sk-public\n");
    for (const name of ["edit.grep", "edit.ls"]) await personEdits(tree, name, { enabled: true });
    const runtime = createRuntime({
      tree,
      builtins,
      logger: silent,
      workspace: ws.path,
      hiddenPaths: [store],
    });
    try {
      const read = await runtime.call("edit.read", { path: "data/000001.log" }, { vid: "r" });
      expect(read).toMatchObject({ kind: "denied", details: { rule: "store" } });
      const write = await runtime.call("edit.write", { path: "data/x", text: "x" }, { vid: "r" });
      expect(write.kind).toBe("denied");
      const grep = await runtime.call("edit.grep", { pattern: "sk-" }, { vid: "r" });
      expect(grep.text).toContain("notes.txt");
      expect(grep.text).not.toContain("sk-secret");
      expect((await runtime.call("edit.ls", {}, { vid: "r" })).text).not.toContain("data");
    } finally {
      await runtime.close();
      await tree.close();
      await ws.remove();
    }
  });
});

describe("runs are kept apart", () => {
  const h = useHarness("memory", {}, builtins);

  it("a tool never writes another run's session, records, usage, state or approvals", async () => {
    await h.tree.append("/byteseek/session/victim/", json({ role: "user", content: "hello" }), {
      vid: "victim",
    });
    for (const key of [
      "/byteseek/session/victim/1",
      "/byteseek/session/attacker/0",
      "/byteseek/tool/victim/0",
      "/byteseek/usage/victim",
      "/vthread/victim/status",
      "/byteseek/approval/victim/0",
    ]) {
      const r = await h.runtime.call(
        "tree.set",
        { key, value: { role: "user", content: "forged" } },
        { vid: "attacker" },
      );
      expect(r, key).toMatchObject({ kind: "denied", details: { code: "denied" } });
      expect(r.text).toContain("only byteseek's runtime");
      expect(await h.tree.get(key), key).toBeUndefined();
    }
    expect(
      (await h.runtime.call("tree.del", { key: "/byteseek/session/victim/0" }, { vid: "attacker" })).kind,
    ).toBe("denied");
  });

  it("an agent changes the tools its runs declared, never a person's without approval", async () => {
    const echo = {
      name: "text.echo",
      description: "echo",
      confirm: true,
      params: { type: "object", properties: { text: { type: "string" } } },
      impl: { kind: "shell", argv: ["echo", "{text}"] },
    };
    await h.tree.set("/byteseek/tools/text.echo", json(echo));
    const rewrite = await h.runtime.call(
      "tree.set",
      {
        key: "/byteseek/tools/text.echo",
        value: { ...echo, confirm: false, impl: { kind: "shell", argv: ["id"] } },
      },
      { vid: "agent" },
    );
    // lowering the person's confirm: true is refused outright (a floor), approval or not
    expect(rewrite).toMatchObject({ kind: "denied", details: { code: "denied", rule: "person floor" } });
    const keepsConfirm = await h.runtime.call(
      "tree.set",
      { key: "/byteseek/tools/text.echo", value: { ...echo, impl: { kind: "shell", argv: ["id"] } } },
      { vid: "agent" },
    );
    expect(keepsConfirm).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    const node = await h.tree.get("/byteseek/tools/text.echo");
    expect(node?.kind === "json" && node.value.value).toEqual(echo);
    expect(
      (await h.runtime.call("tree.del", { key: "/byteseek/tools/text.echo" }, { vid: "agent" })).kind,
    ).toBe("denied");

    const mine = { ...echo, name: "text.mine", confirm: false };
    expect(
      (await h.runtime.call("tree.set", { key: "/byteseek/tools/text.mine", value: mine }, { vid: "a1" }))
        .kind,
    ).toBe("ok");
    const changed = await h.runtime.call(
      "tree.set",
      { key: "/byteseek/tools/text.mine", value: { ...mine, description: "echo v2" } },
      { vid: "a2" },
    );
    expect(changed.kind).toBe("ok");
    expect((await h.runtime.call("tree.del", { key: "/byteseek/tools/text.mine" }, { vid: "a2" })).kind).toBe(
      "ok",
    );
  });
});
