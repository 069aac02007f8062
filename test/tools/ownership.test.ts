/**
 * Ownership follows the person (tools/gate/ownership.ts), against a real server: a person's write with
 * `kvspace set` (a child process) or an HTTP PUT makes a key theirs; a run's change or deletion of
 * what a person owns — a declaration, a registry entry, memory — is an approval request; a setting a
 * person tightened is a floor no run lowers; the runtime's areas are written by the runtime alone.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PendingApproval } from "../../tools/call/call-notices.js";
import type { CallOptions } from "../../tools/runtime.js";
import type { TreeNode } from "../../tree/types.js";
import { type CliServer, cliEnv, startCliServer, tempDirs } from "../cli/cli-server.js";
import { assertBuilt, runCli } from "../cli/run-cli.js";

const temps = tempDirs("byteseek-owner-");
afterAll(() => temps.removeAll());

const TOKEN = "0wner-t0ken";

const echo = {
  name: "text.echo",
  description: "Echo a text",
  params: { type: "object", properties: { text: { type: "string" } } },
  impl: { kind: "shell", argv: ["echo", "{text}"] },
};

describe("ownership follows the person", () => {
  let server: CliServer;
  beforeAll(async () => {
    server = await startCliServer({
      store: join(await temps.make(), "store"),
      workspace: await temps.make(),
      seed: true,
      token: TOKEN,
    });
  });
  afterAll(() => server.close());

  const call = (name: string, args: unknown, options: CallOptions) =>
    server.byteseek.runtime.call(name, args, options);
  const get = (key: string): Promise<TreeNode | undefined> => server.tree.get(key);
  const valueAt = async (key: string) => {
    const node = await get(key);
    return node?.kind === "json" ? node.value.value : undefined;
  };
  async function put(key: string, value: unknown): Promise<Response> {
    return fetch(`${server.url}/v1/tree${key}`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ kind: "json", value }),
    });
  }
  /** A call that may ask a person, with the approval it asks for once it does. */
  function callWaiting(name: string, args: unknown, vid: string) {
    let notice: (p: PendingApproval) => void = () => undefined;
    const pending = new Promise<PendingApproval>((res) => {
      notice = res;
    });
    const result = call(name, args, { vid, waitForApproval: true, onApproval: notice });
    return { pending, result };
  }

  it("a person's confirm: true set with kvspace set takes a run's tool over, and no other run can remove it", async () => {
    assertBuilt();
    const key = "/byteseek/tools/text.echo";
    expect((await call("tree.set", { key, value: echo }, { vid: "author" })).kind).toBe("ok");
    expect((await get(key))?.vid).toBe("author");
    const cli = await runCli(["set", key, `json:${JSON.stringify({ ...echo, confirm: true })}`], {
      env: cliEnv(server.url, { BYTESEEK_TOKEN: TOKEN }),
    });
    expect(cli).toMatchObject({ code: 0, stderr: "" });
    expect((await get(key))?.vid).toBeUndefined();

    const lowered = await call("tree.set", { key, value: echo }, { vid: "other" });
    expect(lowered).toMatchObject({ kind: "denied", details: { code: "denied", rule: "person floor" } });
    expect(lowered.text).toMatch(/confirm: true.*ask the user to change it themselves/);
    // approved or not: the floor holds (a person lowers it themselves)
    const approved = await call("tree.set", { key, value: echo }, { vid: "other", approve: true });
    expect(approved).toMatchObject({ kind: "denied", details: { rule: "person floor" } });
    expect(await valueAt(key)).toMatchObject({ confirm: true });
    expect(await call("text.echo", { text: "hi" }, { vid: "other" })).toMatchObject({
      kind: "denied",
      details: { code: "needs_approval" },
    });
  });

  it("a person's import (kvspace import, POST /v1/import) of a line without a run id takes a run's tool over too; a line naming a run keeps it that run's", async () => {
    const key = "/byteseek/tools/text.echo3";
    const decl = { ...echo, name: "text.echo3" };
    expect((await call("tree.set", { key, value: decl }, { vid: "author" })).kind).toBe("ok");
    expect(
      (await call("tree.set", { key: "/byteseek/memory/run-note", value: "x" }, { vid: "author" })).kind,
    ).toBe("ok");
    const lines = [
      { key, kind: "json", value: { ...decl, confirm: true } },
      // a line asking to disown a key itself changes nothing: a run id given wins
      { key: "/byteseek/memory/run-note", kind: "char/utf8", value: "restored", vid: "author", disown: true },
    ];
    // what kvspace import sends to a server (the embedded store's import takes the same checked tree)
    const imported = await fetch(`${server.url}/v1/import`, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson", authorization: `Bearer ${TOKEN}` },
      body: `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
    });
    expect(imported.status).toBe(200);
    expect((await get(key))?.vid).toBeUndefined();
    expect((await get("/byteseek/memory/run-note"))?.vid).toBe("author");
    const lowered = await call("tree.set", { key, value: decl }, { vid: "other" });
    expect(lowered).toMatchObject({ kind: "denied", details: { rule: "person floor" } });
    expect(await valueAt(key)).toMatchObject({ confirm: true });
  });

  it("a person's enabled: false set with an HTTP PUT is a floor too; the person switches it back on", async () => {
    const key = "/byteseek/tools/text.echo2";
    const decl = { ...echo, name: "text.echo2" };
    expect((await call("tree.set", { key, value: decl }, { vid: "author" })).kind).toBe("ok");
    expect((await put(key, { ...decl, enabled: false })).status).toBe(200);
    expect((await get(key))?.vid).toBeUndefined();
    const on = await call("tree.set", { key, value: decl }, { vid: "author" });
    expect(on).toMatchObject({ kind: "denied", details: { rule: "person floor" } });
    expect(on.text).toContain("enabled: false");
    expect((await put(key, decl)).status).toBe(200);
    expect((await call("text.echo2", { text: "hi" }, { vid: "author" })).kind).toBe("ok");
  });

  it("a run's overwrite or deletion of a person's registry entry is an approval request, and its allow-list cannot be widened", async () => {
    const key = "/byteseek/mcp/files";
    const entry = { command: ["true"], enabled: false, tools: ["read_file"] };
    expect((await put(key, entry)).status).toBe(200);
    const before = await get(key);

    const swapped = await call("tree.set", { key, value: { ...entry, command: ["evil"] } }, { vid: "r1" });
    expect(swapped).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    const { tools: _list, ...unlisted } = entry;
    const widened = await call("tree.set", { key, value: unlisted }, { vid: "r1" });
    expect(widened).toMatchObject({ kind: "denied", details: { rule: "person floor" } });
    expect(widened.text).toContain('the tools allow-list ["read_file"]');
    const more = await call(
      "tree.set",
      { key, value: { ...entry, tools: ["read_file", "write_file"] } },
      { vid: "r1" },
    );
    expect(more).toMatchObject({ kind: "denied", details: { rule: "person floor" } });
    const on = await call("tree.set", { key, value: { ...entry, enabled: true } }, { vid: "r1" });
    expect(on).toMatchObject({ kind: "denied", details: { rule: "person floor" } });
    const deleted = await call("tree.del", { key }, { vid: "r1" });
    expect(deleted).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    expect((await get(key))?.modRev).toBe(before?.modRev);

    // a narrower allow-list is no lowering: asked, and once approved it stays the person's
    const { pending, result } = callWaiting("tree.set", { key, value: { ...entry, tools: [] } }, "r1");
    await server.byteseek.runtime.approvals.decide((await pending).key, { decision: "approve" });
    expect((await result).kind).toBe("ok");
    expect(await valueAt(key)).toMatchObject({ tools: [] });
    expect((await get(key))?.vid).toBeUndefined();
  });

  it("never lets a run write or delete the MCP sync state, the runtime's alone", async () => {
    const key = "/byteseek/mcp-sync/files";
    const forged = await call("tree.set", { key, value: { server: "files", tools: {} } }, { vid: "r2" });
    expect(forged).toMatchObject({ kind: "denied", details: { rule: "runtime" } });
    expect(forged.text).toContain("/byteseek/mcp-sync/");
    expect(await get(key)).toBeUndefined();
    expect(await call("tree.del", { key }, { vid: "r2" })).toMatchObject({ kind: "denied" });
  });

  it("a run's edit or deletion of a person's memory entry is an approval request; a denied one changes nothing", async () => {
    const key = "/byteseek/memory/deploy";
    const cli = await runCli(["set", key, "string:deploy with make release"], {
      env: cliEnv(server.url, { BYTESEEK_TOKEN: TOKEN }),
    });
    expect(cli.code).toBe(0);
    const before = await get(key);
    expect(before?.vid).toBeUndefined();
    expect(await call("tree.set", { key, value: "deploy with curl | sh" }, { vid: "r3" })).toMatchObject({
      kind: "denied",
      details: { code: "needs_approval" },
    });
    expect(await call("tree.del", { key }, { vid: "r3" })).toMatchObject({
      details: { code: "needs_approval" },
    });
    const { pending, result } = callWaiting("tree.del", { key }, "r3");
    const asked = await pending;
    expect(asked.diff).toContain("-deploy with make release");
    // the person reads why it waits (tools/gate/approval-wording.ts), not the model's "none could be asked"
    expect(asked.reason).toBe(
      `run r3 wants to delete ${key}, which a person wrote: it is written as yours only if you approve`,
    );
    expect(asked.change).toEqual({ key, action: "del" });
    // a change is approved once: "always" is refused rather than quietly meaning once
    await expect(
      server.byteseek.runtime.approvals.decide(asked.key, { decision: "approve", scope: "always" }),
    ).rejects.toMatchObject({ code: "APPROVAL_INVALID" });
    await server.byteseek.runtime.approvals.decide(asked.key, { decision: "deny" });
    expect((await result).kind).toBe("denied");
    expect((await get(key))?.modRev).toBe(before?.modRev);
  });

  it("a run cannot take the name of a person's tool without their approval", async () => {
    const key = "/byteseek/tools/notes.find";
    const mine = { ...echo, name: "notes.find" };
    expect((await put(key, mine)).status).toBe(200);
    const taken = await call(
      "tree.set",
      { key, value: { ...mine, impl: { kind: "shell", argv: ["id"] } } },
      { vid: "r4" },
    );
    expect(taken).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    expect(await valueAt(key)).toEqual(mine);
  });

  it("a run still changes and deletes what runs wrote, without asking anyone", async () => {
    const key = "/byteseek/memory/scratch";
    expect((await call("tree.set", { key, value: "v1" }, { vid: "r5" })).kind).toBe("ok");
    expect((await call("tree.set", { key, value: "v2" }, { vid: "r6" })).kind).toBe("ok");
    expect((await call("tree.del", { key }, { vid: "r6" })).kind).toBe("ok");
    // and a person edits their own entries with no prompt at all
    expect((await put("/byteseek/memory/mine", { a: 1 })).status).toBe(200);
    expect((await put("/byteseek/memory/mine", { a: 2 })).status).toBe(200);
    expect(await valueAt("/byteseek/memory/mine")).toEqual({ a: 2 });
  });
});
