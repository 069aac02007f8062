/**
 * byteseek's own documents (tools/doc/): written through the tree by hand in a shape their schema
 * refuses, each reader answers DOC_MALFORMED naming the key and what is wrong, instead of
 * handing a mis-shaped value to code that trusts it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTranscript } from "../../agent/replay/transcript.js";
import { recordsOf } from "../../agent/resume.js";
import { keys, runDirs } from "../../shared/keys.js";
import { docs } from "../../tools/doc/docs.js";
import { readDoc, writeDoc } from "../../tools/doc/read-write.js";
import { DocError } from "../../tools/errors.js";
import { createApprovals } from "../../tools/gate/approvals.js";
import { createMcpClient } from "../../tools/mcp/client.js";
import { readOAuth, updateSession } from "../../tools/mcp/oauth/store.js";
import { openTree } from "../../tree/store-config.js";
import type { Tree } from "../../tree/types.js";
import { json, str } from "../../tree/value.js";
import { silent, tempDir } from "./helpers.js";

let tree: Tree;
beforeAll(async () => {
  tree = await openTree({ backend: "memory" });
});
afterAll(async () => {
  await tree.close();
});

/** The DocError a promise rejects with. */
async function docError(p: Promise<unknown>): Promise<DocError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DocError);
  return err as DocError;
}

const pending = {
  state: "pending",
  vid: "r1",
  tool: "shell.run",
  args: { command: "ls" },
  reason: "shell.run needs confirmation",
  rule: "declaration.confirm",
  ts: 1,
} as const;

describe("byteseek's own documents", () => {
  it("reads back what was written, fields a newer byteseek added kept", async () => {
    const key = keys.approval("r0", 0);
    await writeDoc(tree, docs.approval, key, { ...pending, vid: "r0", later: "kept" });
    expect(await readDoc(tree, docs.approval, key)).toEqual({ ...pending, vid: "r0", later: "kept" });
    expect(await readDoc(tree, docs.approval, keys.approval("r0", 9))).toBeUndefined();
  });

  it("answers DOC_MALFORMED, naming the key and the wrong fields, for an approval written by hand", async () => {
    const key = keys.approval("r1", 0);
    await tree.set(key, json({ state: "maybe", vid: "r1", args: {}, reason: "x", rule: "y", ts: 1 }));
    const approvals = createApprovals(tree);
    const err = await docError(approvals.read(key));
    expect(err.code).toBe("DOC_MALFORMED");
    expect(err.message).toContain(`${key} does not hold an approval entry`);
    expect(err.message).toMatch(/state: .*tool: /);
    expect(err.message).toContain(`kvspace del ${key}`);
    expect(err.details).toMatchObject({ key });
    // deciding it and listing the pending ones meet the same answer, not a crash further in
    expect((await docError(approvals.decide(key, { decision: "approve" }))).code).toBe("DOC_MALFORMED");
    expect((await docError(approvals.pending())).code).toBe("DOC_MALFORMED");
    await tree.del(key);
  });

  it("answers DOC_MALFORMED for an approval that is not json at all", async () => {
    const key = keys.approval("r2", 0);
    await tree.set(key, str("approve me"));
    const err = await docError(createApprovals(tree).read(key));
    expect(err.message).toContain("it holds a char/utf8 value, not json");
    await tree.del(key);
  });

  it("answers DOC_MALFORMED when a resumed run meets a call record written by hand among the interrupted message's, and reads no other message's", async () => {
    await tree.append(
      runDirs.records("r3"),
      json({ name: "edit.read", kind: "fine", origin: { message: 1, id: "c1" } }),
    );
    const err = await docError(recordsOf(tree, "r3", 1));
    expect(err.code).toBe("DOC_MALFORMED");
    expect(err.message).toContain(`${keys.toolRecord("r3", 0)} does not hold a call record`);
    expect(err.details.problems).toEqual(expect.arrayContaining([expect.stringMatching(/^kind: /)]));
    // a resume of a later message reads only that message's records: the damaged one is not in its way
    const later = await recordsOf(tree, "r3", 3);
    expect([...later.keys()]).toEqual([]);
  });

  it("answers DOC_MALFORMED when a run's transcript holds a message written by hand", async () => {
    await tree.append(runDirs.sessions("r4"), json({ role: "user", content: "hello" }));
    await tree.append(runDirs.sessions("r4"), json({ role: "assistant", text: 42 }));
    const err = await docError(readTranscript(tree, "r4"));
    expect(err.message).toContain(`${keys.session("r4", 1)} does not hold a session message`);
  });

  it("answers DOC_MALFORMED for a registry entry that is neither a command nor a URL", async () => {
    const key = keys.mcpServer("broken");
    await tree.set(key, json({ command: "not-an-array" }));
    const err = await docError(readDoc(tree, docs.mcpServer, key));
    expect(err.message).toContain(`${key} does not hold an MCP server registry entry`);
    await tree.set(key, json({ command: ["server", "--stdio"] }));
    expect(await readDoc(tree, docs.mcpServer, key)).toMatchObject({
      command: ["server", "--stdio"],
      enabled: true,
    });
  });

  it("answers DOC_MALFORMED for an MCP sync state written by hand: the review refuses, the sync writes nothing, calls are refused", async () => {
    const key = keys.mcpSync("hand");
    await tree.set(keys.mcpServer("hand"), json({ command: ["server"] }));
    const synced = { "hand.t": { name: "hand.t", impl: { kind: "mcp", server: "hand", tool: "t" } } };
    await tree.set(
      key,
      json({ server: "hand", state: "ok", reason: "start", ts: 1, tools: synced, held: { t: {} } }),
    );
    const dir = await tempDir();
    const client = createMcpClient({ tree, logger: silent, workspace: dir.path, env: {} });
    try {
      const err = await docError(client.review("hand"));
      expect(err.message).toContain(`${key} does not hold an MCP server's sync state`);
      expect(err.details.problems).toEqual(
        expect.arrayContaining([expect.stringMatching(/^held\.t\.hash: /)]),
      );
      // the sync does not take it for "never synced" (which would accept every tool afresh)
      const before = await tree.get(key);
      const [report] = await client.sync("hand");
      expect(report).toMatchObject({ ok: false, error: expect.stringContaining(`kvspace del ${key}`) });
      expect((await tree.get(key))?.modRev).toBe(before?.modRev);
      // a damaged state cannot say what is held, so nothing of the server is called
      expect(await client.allowed("hand", "t")).toMatchObject({
        ok: false,
        code: "mcp_not_allowed",
        reason: expect.stringContaining(`${key} does not hold`),
      });
      const status = (await client.list()).find((s) => s.server === "hand");
      expect(status?.error).toContain(`${key} does not hold`);
    } finally {
      await client.close();
      await dir.remove();
      await tree.del(key);
      await tree.del(keys.mcpServer("hand"));
    }
  });

  it("writes a sign-in session back into the registry entry as stored: every other field kept, in its place", async () => {
    const key = keys.mcpServer("signin");
    const url = "https://mcp.example.test/mcp";
    await tree.set(
      key,
      json({ headers: { a: "1" }, url, oauth: { scope: "s", clientId: "c" }, enabled: true }),
    );
    const configRev = (await tree.get(key))?.modRev;
    await updateSession(tree, "signin", (s) => ({ ...s, url }));
    const node = await tree.get(key);
    const value =
      node?.kind === "json" ? (node.value.value as { oauth: Record<string, unknown> }) : undefined;
    expect(Object.keys(value ?? {})).toEqual(["headers", "url", "oauth", "enabled"]);
    expect(Object.keys(value?.oauth ?? {})).toEqual(["scope", "clientId", "session"]);
    expect(value?.oauth.session).toEqual({ url, configRev, configHash: expect.any(String) });
    expect((await readOAuth(tree, "signin")).session.url).toBe(url);
    await tree.set(key, json({ url, oauth: { scope: 5 } }));
    const err = await docError(readOAuth(tree, "signin"));
    expect(err.message).toContain(`${key} does not hold an MCP server registry entry`);
    expect(err.details.problems).toEqual([expect.stringMatching(/^oauth\.scope: /)]);
    await tree.del(key);
  });
});
