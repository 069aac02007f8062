import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { peek, setPolicy, silent, tempDir } from "./helpers.js";

describe("the gate on file paths", () => {
  let tree: Tree;
  let runtime: Runtime;
  let ws: Awaited<ReturnType<typeof tempDir>>;
  let outside: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    ws = await tempDir("byteseek-gate-ws-");
    outside = await tempDir("byteseek-gate-out-");
    tree = await openTree({ backend: "memory" });
    await seedTools({ tree, builtins: [peek] });
    runtime = createRuntime({ tree, builtins: [peek], logger: silent, workspace: ws.path });
    await mkdir(join(ws.path, "src"));
    await writeFile(join(ws.path, "src", "a.ts"), "x");
  });
  afterEach(async () => {
    await runtime.close();
    await tree.close();
    await ws.remove();
    await outside.remove();
  });

  const call = (path: string) => runtime.call("edit.peek", { path }, { vid: "g" });

  it("lets through paths inside the workspace, existing or not", async () => {
    expect((await call("src/a.ts")).kind).toBe("ok");
    expect((await call(join(runtime.workspace, "new/dir/b.ts"))).kind).toBe("ok");
  });

  it("denies paths outside the workspace: .., absolute, a sibling with the same prefix, an escaping symlink", async () => {
    await symlink(outside.path, join(ws.path, "link"));
    for (const p of ["../x", "/etc/passwd", `${runtime.workspace}-evil/x`, "link/secret"]) {
      const r = await call(p);
      expect(r).toMatchObject({ kind: "denied", details: { code: "outside_root" } });
    }
  });

  it("allows the policy's extra roots and denies its deny prefixes", async () => {
    await setPolicy(tree, { workspaceRoots: [outside.path], deny: [".git", "src/a.ts"] });
    expect((await call(join(outside.path, "x"))).kind).toBe("ok");
    expect(await call(".git/config")).toMatchObject({ kind: "denied", details: { code: "denied" } });
    expect((await call("src/a.ts")).text).toContain("the policy denies access to src/a.ts");
    expect((await call("src/b.ts")).kind).toBe("ok");
    expect((await call(".gitignore")).kind).toBe("ok");
  });
});
