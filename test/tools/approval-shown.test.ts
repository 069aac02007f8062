import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashOf } from "../../tools/catalogue/hash.js";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { json } from "../../tree/value.js";
import { peek, personEdits, setPolicy, silent, tempDir } from "./helpers.js";

/**
 * The catalogue tells a reviewer (the tools page, `GET /v1/tools`) whether calls of a tool wait for a
 * person, and it must say what the gate does: an alias inherits its built-in's `confirm`, a standing
 * approval lifts it, one pinned to a hash only for that version.
 */
describe("the approval a tool needs, as the catalogue shows it", () => {
  let tree: Tree;
  let runtime: Runtime;
  let ws: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    ws = await tempDir("byteseek-approval-shown-");
    tree = await openTree({ backend: "memory" });
    await seedTools({ tree, builtins: [peek] });
    runtime = createRuntime({ tree, builtins: [peek], logger: silent, workspace: ws.path });
    await personEdits(tree, "edit.peek", { confirm: true });
    await tree.set(
      "/byteseek/tools/files.look",
      json({
        name: "files.look",
        description: "the same built-in under another name",
        params: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        impl: { kind: "builtin", ref: "edit.peek" },
      }),
    );
  });
  afterEach(async () => {
    await runtime.close();
    await tree.close();
    await ws.remove();
  });

  async function shown(name: string): Promise<string | undefined> {
    const tool = (await runtime.listTools("r")).valid.find((t) => t.name === name);
    if (!tool) throw new Error(`${name} is not in the catalogue`);
    return tool.approval;
  }
  const call = (name: string) => runtime.call(name, { path: "a" }, { vid: "r" });

  it("names the declaration's confirm, and an alias's confirm inherited from the built-in it runs", async () => {
    expect(await shown("edit.peek")).toBe("declaration.confirm");
    expect(await shown("files.look")).toBe("edit.peek.confirm (inherited)");
    // the gate agrees: both wait for a person
    expect(await call("files.look")).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    expect(await call("edit.peek")).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
  });

  it("names the policy's confirm rule, and shows none once a standing approval lifts it", async () => {
    await personEdits(tree, "edit.peek", { confirm: false });
    await setPolicy(tree, { confirm: ["edit.peek"] });
    expect(await shown("files.look")).toBe("confirm[0] (edit.peek)");
    await setPolicy(tree, { confirm: ["edit.peek"], approved: ["files.look"] });
    expect(await shown("files.look")).toBeUndefined();
    expect((await call("files.look")).kind).toBe("ok");
    expect(await shown("edit.peek")).toBe("confirm[0] (edit.peek)");
  });

  it("lifts it for the version a pinned approval names, and shows it again once the declaration changes", async () => {
    const node = await tree.get("/byteseek/tools/files.look");
    const value = node && node.kind === "json" ? node.value.value : undefined;
    await setPolicy(tree, { approved: [`files.look@sha256:${hashOf(value)}`] });
    expect(await shown("files.look")).toBeUndefined();
    expect((await call("files.look")).kind).toBe("ok");
    await personEdits(tree, "files.look", { description: "changed since it was approved" });
    expect(await shown("files.look")).toBe("edit.peek.confirm (inherited)");
    expect(await call("files.look")).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
  });
});
