/**
 * Several `byteseek mcp` on one store folder: the first holds the folder and serves the others'
 * relayed stdio on a socket beside the store; when it goes, one of them takes over and the rest
 * follow. Real built CLI processes, official clients. vitest.config.ts runs this file on both
 * lanes: the relay reading ids off the SDKs' line shapes, and parsing every line (BYTESEEK_FAST=0,
 * which the processes get through stdioFolders' env).
 */
import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARE_SOCKET } from "../../tree/held-socket.js";
import { alive, waitGone } from "../helpers/processes.js";
import { eventually, tempDir } from "../server/helpers.js";
import {
  BYTESEEK_BIN,
  CONFIRMED_TOOL,
  closedAfterEach,
  connectV1Stdio,
  connectV2Stdio,
  stdioFolders,
  textOf,
} from "./helpers.js";
import { exchange, RELAYED_RECORD, recordName, storeToken } from "./share-helpers.js";

const track = closedAfterEach();

describe("byteseek mcp processes sharing one store folder", () => {
  const folders = stdioFolders("mcp-share", { "a.txt": "alpha\n" });

  it("serves a second process on a held folder through the first, into the same store, with a socket only this user may use", async () => {
    const first = track(await connectV1Stdio(folders.env, { name: "first" }, ["--vid", "one"]));
    const second = track(await connectV2Stdio(folders.env, { name: "second" }));
    const third = track(await connectV1Stdio(folders.env, { name: "third" }, ["--vid", "three"]));
    expect((await first.callTool({ name: "edit_read", arguments: { path: "a.txt" } })).isError).toBe(false);
    const two = await second.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
    expect(two.isError).toBe(false);
    expect(textOf(two)).toContain("alpha");
    // A relayed session's run is the holder's to name: not mcp-<client name>, not its --vid.
    const twoRecord = String((two._meta as Record<string, unknown>)["byteseek/record"]);
    expect(twoRecord).toMatch(RELAYED_RECORD);
    // each session a run of its own: mcp-<client name>-<n>
    expect(twoRecord).toBe("/byteseek/tool/mcp-second-1/0");
    const three = await third.callTool({ name: "edit_read", arguments: {} });
    expect(three.isError).toBe(true);
    const threeRecord = String((three._meta as Record<string, unknown>)["byteseek/record"]);
    expect(threeRecord).toMatch(RELAYED_RECORD);
    expect(threeRecord.split("/")[3]).not.toBe(twoRecord.split("/")[3]);
    const socket = await stat(join(folders.store, SHARE_SOCKET));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    await track.closeAll();
    expect(await recordName(folders.store, "/byteseek/tool/one/0")).toBe("edit.read");
    expect(await recordName(folders.store, threeRecord)).toBe("edit.read");
    expect(await recordName(folders.store, "/byteseek/tool/three/0")).toBeUndefined();
  });

  it.each([
    ["ends", false],
    ["is killed", true],
  ])(
    "keeps a session going when the process holding the folder %s: another takes the store over and the client calls on",
    async (_how, kill) => {
      const holder = await connectV1Stdio(folders.env, { name: "holder" }, ["--vid", "h"]);
      let changed = 0;
      const a = track(await connectV1Stdio(folders.env, { onToolsChanged: () => changed++ }, ["--vid", "a"]));
      let bChanged = 0;
      const b = track(await connectV2Stdio(folders.env, { name: "b", onToolsChanged: () => bChanged++ }));
      const sub = await b.listen({ toolsListChanged: true });
      expect(sub.honoredFilter.toolsListChanged).toBe(true);
      const first = await a.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
      expect(first.isError).toBe(false);
      const before = String((first._meta as Record<string, unknown>)["byteseek/record"]);
      expect(before).toMatch(RELAYED_RECORD);
      if (kill) {
        // No goodbye: the relays find their sockets closed, the stale socket file still there.
        const pid = (holder.transport as unknown as { pid: number }).pid;
        process.kill(pid, "SIGKILL");
        track(holder);
        await eventually(() => !alive(pid), "the holder's end");
        // A successor answers a relay's hello (the dead holder's socket refuses connections).
        const hello = `${JSON.stringify({ byteseek: "relay", version: 2, workspace: folders.workspace, token: await storeToken(folders.store) })}\n`;
        const path = join(folders.store, SHARE_SOCKET);
        await eventually(
          async () => (await exchange(path, hello, true).catch(() => "")).includes('"ok"'),
          "a successor holding the folder",
        );
      } else await holder.close();
      // Each goes on without reconnecting: one of the relays now holds the store, the other relays to it.
      const again = await a.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
      expect(again.isError).toBe(false);
      // The new holder names the session's run afresh.
      const after = String((again._meta as Record<string, unknown>)["byteseek/record"]);
      expect(after).toMatch(RELAYED_RECORD);
      expect(after.split("/")[3]).not.toBe(before.split("/")[3]);
      const fromB = await b.callTool({ name: "tree_get", arguments: { key: "/byteseek/prompt/system" } });
      expect(fromB.isError).toBe(false);
      // The new holder's watch tells the relayed session when the catalogue changes.
      const set = await b.callTool({
        name: "tree_set",
        arguments: {
          key: "/byteseek/tools/text.peek",
          value: {
            name: "text.peek",
            description: "Read a tree key",
            params: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
            impl: { kind: "builtin", ref: "tree.get" },
          },
        },
      });
      expect(set.isError).toBe(false);
      await eventually(() => changed > 0, "notifications/tools/list_changed after the takeover");
      // b's listen stream was sent again to the new holder, under b's own request.
      await eventually(() => bChanged > 0, "the 2026-era listen stream's event after the takeover");
      // b's run declared it: b is offered it; a's run would be once a person accepts it
      expect((await b.listTools()).tools.map((t) => t.name)).toContain("text_peek");
      await sub.close();
    },
  );

  it("answers a request caught in flight when its holder dies with an error saying it may have run, then serves the next", async () => {
    const spawnMcp = () => {
      const child = spawn(process.execPath, [BYTESEEK_BIN, "mcp", "--vid", "raw"], {
        env: { PATH: process.env.PATH ?? "", ...folders.env },
        stdio: ["pipe", "pipe", "pipe"],
      });
      const lines: Array<{ id?: unknown; method?: string; result?: unknown; error?: { message: string } }> =
        [];
      let rest = "";
      child.stdout.on("data", (d: Buffer) => {
        const parts = (rest + d.toString()).split("\n");
        rest = parts.pop() ?? "";
        for (const p of parts) if (p !== "") lines.push(JSON.parse(p));
      });
      const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
      return { child, lines, send };
    };
    const init = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: { elicitation: {} },
        clientInfo: { name: "raw", version: "1" },
      },
    });
    const call = (id: number, name = "edit_read", args: unknown = { path: "a.txt" }) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: args },
    });
    const holder = spawnMcp();
    holder.send(init(1));
    await eventually(() => holder.lines.length > 0, "the holder's initialize answer");
    // Started once the first holds the folder, so this one relays.
    const relay = spawnMcp();
    try {
      relay.send(init(1));
      relay.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await eventually(() => relay.lines.some((l) => l.id === 1), "the relayed initialize answer");
      relay.send(
        call(4, "tree_set", { key: `/byteseek/tools/${CONFIRMED_TOOL.name}`, value: CONFIRMED_TOOL }),
      );
      await eventually(() => relay.lines.some((l) => l.id === 4), "the declaration written");
      // A call that asks the person: the holder waits for the answer (the question reached the
      // client, so the call is in the holder's hands), and dies meanwhile.
      relay.send(call(5, "demo_confirmed", { key: "/byteseek/prompt/system" }));
      await eventually(() => relay.lines.some((l) => l.method === "elicitation/create"), "the question");
      holder.child.kill("SIGKILL");
      await eventually(() => relay.lines.some((l) => l.id === 5), "an answer to the request in flight");
      const lost = relay.lines.find((l) => l.id === 5);
      expect(lost?.error?.message).toContain("may have run");
      // The relay took the folder over: the next call is served, and its replayed opening's answer is not shown.
      relay.send(call(6));
      await eventually(() => relay.lines.some((l) => l.id === 6), "the next call's answer");
      expect(relay.lines.find((l) => l.id === 6)?.result).toMatchObject({ isError: false });
      expect(relay.lines.filter((l) => l.id === 1)).toHaveLength(1);
      expect(relay.lines.every((l) => typeof l.id !== "string")).toBe(true);
    } finally {
      holder.child.kill("SIGKILL");
      relay.child.stdin.end();
      await new Promise((r) => relay.child.once("exit", r));
    }
  });

  it("serves a process started for another workspace in the holder's, saying so on stderr with how to work in its own", async () => {
    const holder = track(await connectV1Stdio(folders.env, { name: "holder" }));
    expect((await holder.listTools()).tools.length).toBeGreaterThan(0);
    const other = await tempDir("byteseek-mcp-share-other-");
    try {
      const relay = track(
        await connectV1Stdio(
          { KVSPACE: folders.store, BYTESEEK_WORKSPACE: other.path },
          { name: "elsewhere" },
        ),
      );
      let stderr = "";
      (relay.transport as unknown as { stderr: NodeJS.ReadableStream }).stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      // a.txt is only in the holder's workspace: the relayed call reads it there
      const read = await relay.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
      expect(read.isError).toBe(false);
      expect(textOf(read)).toContain("alpha");
      expect(relay.getInstructions()).toContain(`workspace ${folders.workspace}`);
      await eventually(() => stderr.includes("BYTESEEK_WORKSPACE"), "the note on stderr");
      expect(stderr).toContain(`whose workspace is ${folders.workspace}`);
      expect(stderr).toContain(`not in ${other.path}`);
    } finally {
      await track.closeAll();
      await other.remove();
    }
  });

  describe("to connections that are not a relay's (one holder for both)", () => {
    let holder: Awaited<ReturnType<typeof connectV1Stdio>>;
    beforeAll(async () => {
      holder = await connectV1Stdio(folders.env, { name: "holder" });
    });
    afterAll(async () => {
      const pid = (holder?.transport as { pid?: number | null } | undefined)?.pid;
      await holder?.close();
      if (typeof pid === "number") await waitGone(pid);
    });

    it("drops a connection that never says hello, while serving its own client meanwhile", async () => {
      const silent = connect(join(folders.store, SHARE_SOCKET));
      const closed = new Promise<number>((done) => {
        const t0 = Date.now();
        silent.on("error", () => {});
        silent.on("close", () => done(Date.now() - t0));
      });
      expect((await holder.callTool({ name: "edit_read", arguments: { path: "a.txt" } })).isError).toBe(
        false,
      );
      const after = await closed;
      expect(after).toBeGreaterThanOrEqual(4000);
      expect(after).toBeLessThan(15_000);
    });

    it("answers a connection that is not a relay's with a refusal and closes it", async () => {
      expect((await holder.listTools()).tools.length).toBeGreaterThan(0);
      const path = join(folders.store, SHARE_SOCKET);
      // An MCP message straight away (no hello), and a hello of the version before (no credential).
      const raw = await exchange(
        path,
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })}\n`,
      );
      expect(raw.closed).toBe(true);
      expect(JSON.parse(raw.answer)).toMatchObject({ byteseek: "refused", code: "MCP_SHARE_HELLO" });
      const old = await exchange(
        path,
        `${JSON.stringify({ byteseek: "relay", version: 1, workspace: folders.workspace })}\n`,
      );
      expect(JSON.parse(old.answer)).toMatchObject({ byteseek: "refused", code: "MCP_SHARE_HELLO" });
      // Still serving.
      expect((await holder.callTool({ name: "edit_read", arguments: { path: "a.txt" } })).isError).toBe(
        false,
      );
    });
  });
});
