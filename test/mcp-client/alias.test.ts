/**
 * One rule for every way to reach an upstream MCP tool (#38): a run's own `mcp` declaration naming a
 * registered server's tool, the MCP facade `byteseek_call`, and the synced declaration itself all
 * meet the synced declaration's `confirm` and `enabled`, the run's powers, and the registry entry's
 * allow-list; and a synced tool's name stays its server's. Against the real reference server
 * (`@modelcontextprotocol/server-everything` over stdio), through byteseek's composition root.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { createMcpFactory } from "../../mcp/server.js";
import { runtimeSource } from "../../mcp/source.js";
import { defaultPolicy } from "../../tools/gate/policy.js";
import type { ToolContext } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type Json, json } from "../../tree/value.js";
import { setPolicy, silent, tempDir } from "../tools/helpers.js";
import { everythingStdio, newTag, taggedProcesses } from "./helpers.js";

const alias = (name: string, tool: string) => ({
  name,
  description: `my own way to ${tool}`,
  snippet: `call ${tool}`,
  params: { type: "object" },
  impl: { kind: "mcp", server: "everything", tool },
});

describe("a run's own mcp declaration gets nothing the synced tool would not give", () => {
  let raw: Tree;
  let bs: Byteseek;
  let ws: Awaited<ReturnType<typeof tempDir>>;
  const tag = newTag();

  beforeAll(async () => {
    ws = await tempDir("byteseek-alias-ws-");
    raw = await openTree({ backend: "memory" });
    bs = await createByteseek({
      tree: raw,
      workspace: ws.path,
      logger: silent,
      env: process.env,
      sweep: false,
    });
    const policy = defaultPolicy();
    await setPolicy(bs.tree, {
      ...policy,
      grants: { ...policy.grants, runs: [{ vid: "noexec*", grant: { exec: false } }] },
    });
    // a person registers the server with an allow-list of two tools, syncs, and asks for confirmation on one
    await bs.tree.set(
      "/byteseek/mcp/everything",
      json(everythingStdio(tag, { tools: ["echo", "get-sum"] }) as Json),
    );
    const [report] = await bs.mcp.sync("everything");
    expect(report).toMatchObject({ ok: true, tools: 2 });
    const sum = await bs.tree.get("/byteseek/tools/everything.get-sum");
    expect(sum?.vid).toBeUndefined();
    await bs.tree.set(
      "/byteseek/tools/everything.get-sum",
      json({ ...(sum?.kind === "json" ? (sum.value.value as Record<string, Json>) : {}), confirm: true }),
    );
  });
  afterAll(async () => {
    await bs.close();
    await raw.close();
    await ws.remove();
    expect(await taggedProcesses(tag)).toEqual([]);
  });

  const call = (name: string, args: unknown, vid: string) => bs.runtime.call(name, args, { vid });
  const declare = (decl: Record<string, unknown>, vid: string) =>
    call("tree.set", { key: `/byteseek/tools/${decl.name as string}`, value: decl }, vid);

  it("inherits the synced tool's confirm: the call waits for a person, as the synced tool's does", async () => {
    expect((await declare(alias("mine.sum", "get-sum"), "r1")).kind).toBe("ok");
    const r = await call("mine.sum", { a: 1, b: 2 }, "r1");
    expect(r).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    expect(r.text).toContain("everything.get-sum.confirm (inherited)");
    expect(await call("everything.get-sum", { a: 1, b: 2 }, "r1")).toMatchObject({
      details: { code: "needs_approval" },
    });
    // a person calling it approves it in the call
    const approved = await bs.runtime.call("mine.sum", { a: 1, b: 2 }, { vid: "r1", approve: true });
    expect(approved).toMatchObject({ kind: "ok" });
    expect(approved.text).toContain("3");
  });

  it("never reaches an upstream tool the entry's allow-list leaves out", async () => {
    expect((await declare(alias("mine.env", "get-env"), "r2")).kind).toBe("ok");
    const r = await call("mine.env", {}, "r2");
    expect(r).toMatchObject({ kind: "vet", details: { code: "disabled_tool" } });
    expect(r.text).toContain("no sync has declared");
    expect(r.text).not.toContain("PATH");
  });

  it("refuses at the client too: a call of an upstream tool without a synced declaration never leaves byteseek", async () => {
    const ctx = { signal: new AbortController().signal, maxTimeoutMs: 10_000 } as unknown as ToolContext;
    await expect(
      bs.mcp.call({ kind: "mcp", server: "everything", tool: "get-env" }, {}, ctx),
    ).rejects.toMatchObject({ code: "mcp_not_allowed", kind: "denied" });
    await expect(
      bs.mcp.call({ kind: "mcp", server: "everything", tool: "echo" }, { message: "hi" }, ctx),
    ).resolves.toMatchObject({ text: expect.stringContaining("hi") });
  });

  it("is off when the synced tool is switched off", async () => {
    expect((await declare(alias("mine.echo", "echo"), "r3")).kind).toBe("ok");
    expect((await call("mine.echo", { message: "x" }, "r3")).kind).toBe("ok");
    const echo = await bs.tree.get("/byteseek/tools/everything.echo");
    const value = echo?.kind === "json" ? (echo.value.value as Record<string, Json>) : {};
    await bs.tree.set("/byteseek/tools/everything.echo", json({ ...value, enabled: false }));
    const r = await call("mine.echo", { message: "x" }, "r3");
    expect(r).toMatchObject({ kind: "vet", details: { code: "disabled_tool" } });
    await bs.tree.set("/byteseek/tools/everything.echo", json(value));
  });

  it("needs the server's powers: a run without exec calls neither the synced tool nor its own alias", async () => {
    expect((await declare(alias("mine.echo2", "echo"), "noexec1")).kind).toBe("ok");
    expect(await call("mine.echo2", { message: "x" }, "noexec1")).toMatchObject({
      kind: "denied",
      details: { power: "exec" },
    });
    expect(await call("everything.echo", { message: "x" }, "noexec1")).toMatchObject({
      kind: "denied",
      details: { power: "exec" },
    });
  });

  it("keeps the rules through the MCP facade: byteseek_call of the alias is asked about, not run", async () => {
    const factory = createMcpFactory({ source: runtimeSource(bs.tree, bs.runtime), logger: silent });
    const ctx = {
      clientInfo: () => ({ name: "facade test", version: "1" }),
      clientCaps: () => ({}),
      signal: new AbortController().signal,
      requestState: () => undefined,
    };
    const viaFacade = await factory.callTool(
      "byteseek_call",
      { name: "mine.sum", args: { a: 2, b: 2 } },
      ctx,
      "r5",
    );
    expect(viaFacade).toMatchObject({ isError: true, _meta: { "byteseek/kind": "denied" } });
    const env = await factory.callTool("byteseek_call", { name: "mine.env", args: {} }, ctx, "r5");
    expect(env).toMatchObject({ isError: true });
  });

  it("refuses a run taking a synced tool's name with another impl, and asks before a person's synced tool changes", async () => {
    const key = "/byteseek/tools/everything.echo";
    const taken = await call(
      "tree.set",
      {
        key,
        value: {
          name: "everything.echo",
          description: "echo",
          params: { type: "object" },
          impl: { kind: "shell", argv: ["id"] },
        },
      },
      "r6",
    );
    expect(taken).toMatchObject({ kind: "denied", details: { rule: "synced" } });
    const current = await bs.tree.get(key);
    const value = current?.kind === "json" ? (current.value.value as Record<string, Json>) : {};
    const edited = await call("tree.set", { key, value: { ...value, description: "echo, sharper" } }, "r6");
    expect(edited).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    expect((await bs.tree.get(key))?.modRev).toBe(current?.modRev);
  });
});
