/**
 * The socket a process holding a store folder serves (`byteseek mcp`, `byteseek serve`): its
 * credential and run ids, kvspace and byteseek run through it, a path taken or planted (where it
 * sits and how it sorts connections: test/tree/held-socket.test.ts). The relay itself (sessions through the holder, takeover) is relay.test.ts's. Real built
 * CLI processes, official clients.
 */
import { mkdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenShared } from "../../mcp/share.js";
import { startServer } from "../../server/main.js";
import { SHARE_SOCKET } from "../../tree/held-socket.js";
import { createHttpTree } from "../../tree/http/index.js";
import { int64, json, openTree, str } from "../../tree/index.js";
import { byteseek as byteseekRun } from "../agent/helpers.js";
import { cliEnv } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { runCli } from "../cli/run-cli.js";
import { startFakeLlm } from "../fake-llm/server.js";
import { waitGone } from "../helpers/processes.js";
import { eventually, tempDir } from "../server/helpers.js";
import { CONFIRMED_TOOL, closedAfterEach, connectV1Stdio, mcpExit, stdioFolders, textOf } from "./helpers.js";
import { exchange, RELAYED_RECORD, recordNameIn, storeToken } from "./share-helpers.js";

const track = closedAfterEach();

/**
 * One `byteseek mcp` holder (run `vid`) for the tests of the enclosing describe, started once (each
 * start costs a process); it and its process are gone before the tests after, which may hold the
 * folder themselves.
 */
function useHolder(
  folders: { readonly env: Record<string, string> },
  vid: string,
): () => Awaited<ReturnType<typeof connectV1Stdio>> {
  let holder: Awaited<ReturnType<typeof connectV1Stdio>> | undefined;
  beforeAll(async () => {
    // the folders' env is read here: they are made in a beforeAll of their own
    holder = await connectV1Stdio(folders.env, { name: "holder" }, ["--vid", vid]);
  });
  afterAll(async () => {
    const pid = (holder?.transport as { pid?: number | null } | undefined)?.pid;
    await holder?.close();
    if (typeof pid === "number") await waitGone(pid);
  });
  return () => {
    if (!holder) throw new Error("the holder exists only inside the describe's tests");
    return holder;
  };
}

describe("the share socket's credential and run ids (issue 31)", () => {
  const folders = stdioFolders("mcp-share-auth", { "a.txt": "alpha\n" });
  const hello = (extra: Record<string, unknown>) =>
    `${JSON.stringify({ byteseek: "relay", version: 2, workspace: folders.workspace, ...extra })}\n`;

  describe("one holder for these two (run victim; each start costs a process)", () => {
    const holder = useHolder(folders, "victim");

    it("gives a client without the holder's credential nothing through relay mode: no session, no call, no HTTP", async () => {
      expect((await holder().listTools()).tools.length).toBeGreaterThan(0);
      // The holder made the store's token at its start: only this user may read it.
      const file = await stat(join(folders.store, "token"));
      expect(file.mode & 0o777).toBe(0o600);
      const path = join(folders.store, SHARE_SOCKET);
      const call = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "edit_read", arguments: { path: "a.txt" } } })}\n`;
      for (const extra of [{}, { token: "not-the-token" }, { token: "" }]) {
        // The hello and a call in one write: the refusal is all that comes back.
        const refused = await exchange(path, hello(extra) + call);
        expect(refused.closed).toBe(true);
        expect(refused.answer.trim().split("\n")).toHaveLength(1);
        expect(JSON.parse(refused.answer)).toMatchObject({
          byteseek: "refused",
          code: "MCP_SHARE_UNAUTHORIZED",
        });
      }
      // HTTP on the same socket asks for the same credential.
      const http = await exchange(
        path,
        "GET /v1/tree/byteseek/policy HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
      );
      expect(http.answer).toMatch(/^HTTP\/1\.1 401 /);
      // A byteseek mcp given the wrong token is refused and says what to do.
      const wrong = await mcpExit({ ...folders.env, BYTESEEK_TOKEN: "not-the-token" });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain("not the holder's");
      // With the token (read from the folder, as byteseek mcp does), a session (its run named by the holder at initialize).
      const ok = await exchange(path, hello({ token: await storeToken(folders.store) }), true);
      expect(JSON.parse(ok)).toMatchObject({ byteseek: "ok", holder: "mcp", workspace: folders.workspace });
      const tree = createHttpTree({ url: "http://localhost", socketPath: path });
      await expect(tree.get("/byteseek/policy")).rejects.toThrow(/401|token/);
      await tree.close();
    });

    it("lets no relayed session name its run: a hello naming one is refused, and --vid of a relayed byteseek mcp is not used", async () => {
      expect((await holder().callTool({ name: "edit_read", arguments: { path: "a.txt" } })).isError).toBe(
        false,
      );
      const path = join(folders.store, SHARE_SOCKET);
      const named = await exchange(path, hello({ token: await storeToken(folders.store), vid: "victim" }));
      expect(JSON.parse(named.answer)).toMatchObject({ byteseek: "refused", code: "MCP_SHARE_HELLO" });
      const relayed = track(await connectV1Stdio(folders.env, { name: "intruder" }, ["--vid", "victim"]));
      const r = await relayed.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
      expect(r.isError).toBe(false);
      expect(String((r._meta as Record<string, unknown>)["byteseek/record"])).toMatch(RELAYED_RECORD);
      await track.closeAll();
      // the store as the holder keeps it, read through its socket
      const tree = createHttpTree({
        url: "http://localhost",
        socketPath: path,
        token: await storeToken(folders.store),
      });
      try {
        // victim's run holds its own call only
        expect((await tree.list("/byteseek/tool/victim/")).children.map((c) => c.name)).toEqual(["0"]);
      } finally {
        await tree.close();
      }
    });
  });

  it("lets a relayed session answer its own elicitation only as its own run: a confirm tool runs, approved and recorded under the holder's run id, never another's", async () => {
    const holder = track(await connectV1Stdio(folders.env, { name: "holder" }, ["--vid", "victim2"]));
    const declared = await holder.callTool({
      name: "tree_set",
      arguments: { key: `/byteseek/tools/${CONFIRMED_TOOL.name}`, value: CONFIRMED_TOOL },
    });
    expect(declared.isError, textOf(declared)).toBe(false);
    // a person accepts the holder run's tool for every run, through the holder's socket
    const accepted = await runInProcess(["tools", "accept", CONFIRMED_TOOL.name], {
      env: cliEnv(folders.store),
    });
    expect(accepted.code, accepted.stderr).toBe(0);
    const relayed = track(
      await connectV1Stdio(folders.env, { name: "intruder", elicit: "accept" }, ["--vid", "victim2"]),
    );
    const r = await relayed.callTool({
      name: "demo_confirmed",
      arguments: { key: "/byteseek/prompt/system" },
    });
    expect(r.isError, textOf(r)).toBe(false);
    const record = String((r._meta as Record<string, unknown>)["byteseek/record"]);
    expect(record).toMatch(RELAYED_RECORD);
    const run = record.split("/")[3] as string;
    await track.closeAll();
    const tree = await openTree({ backend: "classic", location: folders.store });
    try {
      const approval = await tree.get(`/byteseek/approval/${run}/0`);
      expect(approval?.kind === "json" && approval.value.value).toMatchObject({
        state: "approved",
        vid: run,
        // decided through the session's own elicitation, and it says so
        decision: { via: `MCP elicitation of session ${run}` },
      });
      expect(await tree.get("/byteseek/approval/victim2/0")).toBeUndefined();
      // the victim's run holds its own declaration write only
      expect((await tree.list("/byteseek/tool/victim2/")).children.map((c) => c.name)).toEqual(["0"]);
    } finally {
      await tree.close();
    }
  });
});

describe("kvspace and byteseek run on a folder a byteseek mcp holds", () => {
  const folders = stdioFolders("mcp-share-kvspace", { "a.txt": "alpha\n" });

  describe("one holder for these (each start costs a process)", () => {
    const holder = useHolder(folders, "h");

    it("reads and writes the store through the holder's socket, and the holder's client sees the write", async () => {
      const env = { ...cliEnv(folders.store), BYTESEEK_WORKSPACE: folders.workspace };
      expect(await runCli(["set", "/notes/today", "string:written by kvspace"], { env })).toMatchObject({
        code: 0,
        stderr: "",
      });
      expect(await runCli(["get", "/notes/today"], { env })).toMatchObject({
        code: 0,
        stdout: "/notes/today\tchar/utf8:written by kvspace\n",
      });
      // The holder's runtime reads what kvspace wrote: one store, one process holding it.
      const read = await holder().callTool({ name: "tree_get", arguments: { key: "/notes/today" } });
      expect(read.isError).toBe(false);
      expect(textOf(read)).toContain("written by kvspace");
      // A call runs here, in kvspace's own workspace, as on a folder nobody holds; its record goes
      // into the holder's store.
      const elsewhere = await tempDir("byteseek-mcp-share-elsewhere-");
      try {
        await writeFile(join(elsewhere.path, "b.txt"), "beta\n");
        const call = await runCli(["call", "edit.read", '{"path":"b.txt"}', "--vid", "kv"], {
          env: { ...env, BYTESEEK_WORKSPACE: elsewhere.path },
        });
        expect(call).toMatchObject({ code: 0 });
        expect(call.stdout).toContain("beta");
      } finally {
        await elsewhere.remove();
      }
      // Declarations are checked on the way in, as a server checks them.
      const bad = await runCli(["set", "/byteseek/tools/broken", 'json:{"impl":42}'], { env });
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/broken/);
      // the store as the holder keeps it, read through its socket
      const tree = createHttpTree({
        url: "http://localhost",
        socketPath: join(folders.store, SHARE_SOCKET),
        token: await storeToken(folders.store),
      });
      try {
        expect(await tree.get("/notes/today")).toMatchObject({ value: str("written by kvspace") });
        expect(await tree.get("/byteseek/tools/broken")).toBeUndefined();
        expect(await recordNameIn(tree, "/byteseek/tool/kv/0")).toBe("edit.read");
      } finally {
        await tree.close();
      }
    });

    it("lets byteseek run a turn on it: the model and tools here, the records in the holder's store", async () => {
      expect((await holder().listTools()).tools.length).toBeGreaterThan(0);
      const fake = await startFakeLlm();
      try {
        fake.script(
          { toolCalls: [{ name: "edit.read", args: { path: "a.txt" } }] },
          { text: "The file says alpha." },
        );
        const run = await byteseekRun(["run", "What does a.txt say?", "--vid", "turn"], {
          PATH: process.env.PATH ?? "",
          ...folders.env,
          BYTESEEK_LLM_API: "openai",
          BYTESEEK_LLM_URL: `${fake.url}/v1`,
          BYTESEEK_LLM_MODEL: "fake-1",
          BYTESEEK_LLM_MAX_RETRIES: "0",
        });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toContain("The file says alpha.");
        expect(run.stderr).toContain(
          "is held by another byteseek process; this run reaches its tree through it",
        );
        // The holder's own client reads the record the turn wrote.
        const rec = await holder().callTool({
          name: "tree_get",
          arguments: { key: "/byteseek/tool/turn/0" },
        });
        expect(textOf(rec)).toContain("edit.read");
      } finally {
        await fake.close();
      }
    });

    it("streams kvspace watch through the socket: a write by the holder's client shows up", async () => {
      expect((await holder().listTools()).tools.length).toBeGreaterThan(0);
      const controller = new AbortController();
      let out = "";
      const done = runInProcess(
        ["watch", "/watched/"],
        { env: { ...cliEnv(folders.store), BYTESEEK_WORKSPACE: folders.workspace } },
        {},
        { signal: controller.signal, onStdout: (all) => (out = all) },
      );
      // The watch starts after its first answer; write until it has seen one.
      await eventually(async () => {
        const w = await holder().callTool({
          name: "tree_set",
          arguments: { key: "/watched/k", value: "from the holder" },
        });
        expect(w.isError, textOf(w)).toBe(false);
        return out.includes("/watched/k\tchar/utf8:from the holder");
      }, "kvspace watch to print the holder's write");
      controller.abort();
      expect((await done).code).toBe(0);
    });

    it("answers HTTP on the socket with the same guard as on TCP: another Host is refused", async () => {
      expect((await holder().listTools()).tools.length).toBeGreaterThan(0);
      const path = join(folders.store, SHARE_SOCKET);
      const ok = await exchange(
        path,
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
      );
      expect(ok.answer).toMatch(/^HTTP\/1\.1 200 /);
      const misdirected = await exchange(
        path,
        "GET /v1/tree/notes/ HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
      );
      expect(misdirected.answer).toMatch(/^HTTP\/1\.1 421 /);
      expect(misdirected.answer).toContain("HTTP_MISDIRECTED");
      // Still serving its own client.
      expect((await holder().callTool({ name: "edit_read", arguments: { path: "a.txt" } })).isError).toBe(
        false,
      );
    });
  });

  it("keeps kvspace watch following the session that takes the folder over, and ends it when the last holder stops: exit 1, saying the revision to go on from", async () => {
    const first = await connectV1Stdio(folders.env, { name: "holder" }, ["--vid", "w2"]);
    let out = "";
    const watch = runCli(["watch", "/stopping/"], {
      env: { ...cliEnv(folders.store), BYTESEEK_WORKSPACE: folders.workspace },
      onStdout: (all) => (out = all),
    });
    /** Writes /stopping/<key> through `client` until the watch has printed it (a call caught by a takeover fails). */
    const seen = (client: typeof first, key: string) =>
      eventually(async () => {
        const w = await client
          .callTool({ name: "tree_set", arguments: { key: `/stopping/${key}`, value: "v" } })
          .catch(() => undefined);
        return w?.isError === false && out.includes(`/stopping/${key}\tchar/utf8:v`);
      }, `kvspace watch to print /stopping/${key}`);
    let second: typeof first | undefined;
    try {
      // The watch starts after its first answer; write until it has seen one.
      await seen(first, "k1");
      // A second session relays through the first; when the first stops, it takes the folder over.
      second = await connectV1Stdio(folders.env, { name: "second" });
      await first.close();
      await seen(second, "k2");
    } finally {
      await first.close();
      await second?.close();
    }
    // Before the fix the watch waited for a holder forever (and this test for its timeout).
    const ended = await watch;
    expect(ended.code).toBe(1);
    const rev = Number(ended.stdout.trim().split("\n").at(-1)!.split("\t")[0]);
    expect(ended.stderr).toMatch(/the byteseek process that held the store stopped .*nothing answered there/);
    expect(ended.stderr).toContain(`run kvspace watch /stopping/ --from ${rev + 1}`);
  });

  it("keeps the token that guards its socket from every command, even one the policy's passEnv names", async () => {
    const token = "mcp-holder-token-5d1f";
    const holder = track(await connectV1Stdio({ ...folders.env, BYTESEEK_TOKEN: token }, { name: "holder" }));
    expect((await holder.listTools()).tools.length).toBeGreaterThan(0);
    // A person lists the token in passEnv, through the socket with the token (a shell call's env
    // is built from the runtime's environment and passEnv).
    const tree = createHttpTree({
      url: "http://localhost",
      socketPath: join(folders.store, SHARE_SOCKET),
      token,
    });
    try {
      const policy = await tree.get("/byteseek/policy");
      const value = policy?.kind === "json" ? (policy.value.value as Record<string, unknown>) : {};
      await tree.set("/byteseek/policy", json({ ...value, passEnv: ["BYTESEEK_TOKEN", "LANG"] } as never), {
        force: true,
        ro: true,
      });
    } finally {
      await tree.close();
    }
    const r = await holder.callTool({
      name: "shell_run",
      arguments: { command: 'echo "token=[$BYTESEEK_TOKEN]"' },
    });
    expect(r.isError, textOf(r)).toBe(false);
    expect(textOf(r)).toContain("token=[]");
    expect(textOf(r)).not.toContain(token);
  });
});

describe("byteseek mcp on a folder whose socket path is taken", () => {
  const folders = stdioFolders("mcp-share-taken", { "a.txt": "alone\n" });
  it("still serves its own client (and says on stderr that others cannot share the folder)", async () => {
    await mkdir(join(folders.store, SHARE_SOCKET), { recursive: true });
    const client = track(await connectV1Stdio(folders.env, {}, ["--vid", "alone"]));
    const ok = await client.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
    expect(textOf(ok)).toContain("alone");
    expect((await stat(join(folders.store, SHARE_SOCKET))).isDirectory()).toBe(true);
  });
});

describe("byteseek mcp on a folder a byteseek server holds", () => {
  const folders = stdioFolders("mcp-share-serve", { "a.txt": "served\n" });
  const serve = () =>
    startServer({
      env: { KVSPACE: folders.store, BYTESEEK_WORKSPACE: folders.workspace, BYTESEEK_PORT: "0" },
      logger: pino({ level: "silent" }),
      handleSignals: false,
    });

  it("lets kvspace on its folder through the socket, with the server's token", async () => {
    const server = await startServer({
      env: {
        KVSPACE: folders.store,
        BYTESEEK_WORKSPACE: folders.workspace,
        BYTESEEK_PORT: "0",
        BYTESEEK_TOKEN: "the-token",
      },
      logger: pino({ level: "silent" }),
      handleSignals: false,
    });
    try {
      const env = cliEnv(folders.store);
      const refused = await runCli(["get", "/byteseek/policy"], { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("401");
      expect(refused.stdout).toBe("");
      const withToken = { ...env, BYTESEEK_TOKEN: "the-token" };
      expect((await runCli(["set", "/notes/n", "int:7"], { env: withToken })).code).toBe(0);
      expect(await server.tree.get("/notes/n")).toMatchObject({ value: int64(7n) });
      // The token is this kvspace's credential: a call it runs never sees it, even named in passEnv.
      const policy = await server.tree.get("/byteseek/policy");
      const value = policy?.kind === "json" ? (policy.value.value as Record<string, unknown>) : {};
      await server.tree.set("/byteseek/policy", json({ ...value, passEnv: ["BYTESEEK_TOKEN"] } as never), {
        force: true,
        ro: true,
      });
      const call = await runCli(
        ["call", "shell.run", JSON.stringify({ command: 'echo "token=[$BYTESEEK_TOKEN]"' })],
        { env: { ...withToken, BYTESEEK_WORKSPACE: folders.workspace } },
      );
      expect(call.code, call.stderr).toBe(0);
      expect(call.stdout).toContain("token=[]");
    } finally {
      await server.close();
    }
  });

  it("lets kvspace through the socket of a server started the default way, with the token it made in the folder", async () => {
    const server = await serve();
    try {
      expect(server.tokenFile).toBe(join(folders.store, "token"));
      const env = cliEnv(folders.store);
      expect(await runCli(["set", "/notes/default", "int:8"], { env })).toMatchObject({
        code: 0,
        stderr: "",
      });
      expect(await server.tree.get("/notes/default")).toMatchObject({ value: int64(8n) });
    } finally {
      await server.close();
    }
  });

  it("relays to the server, whose runtime makes and records the call, and leaves a restarted server its folder", async () => {
    let server = await serve();
    try {
      // The server was started the default way: the relay finds its token in the store folder.
      const client = track(await connectV1Stdio(folders.env, {}));
      const ok = await client.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
      expect(textOf(ok)).toContain("served");
      const record = String((ok._meta as Record<string, unknown>)["byteseek/record"]);
      expect(record).toMatch(RELAYED_RECORD);
      expect(await recordNameIn(server.tree, record)).toBe("edit.read");
      // The server restarts: the relay waits for it instead of taking the folder (the start would fail).
      await server.close();
      await new Promise((r) => setTimeout(r, 300));
      server = await serve();
      const again = await client.callTool({ name: "edit_read", arguments: { path: "a.txt" } });
      expect(again.isError).toBe(false);
      const next = String((again._meta as Record<string, unknown>)["byteseek/record"]);
      expect(await recordNameIn(server.tree, next)).toBe("edit.read");
    } finally {
      await track.closeAll();
      await server.close();
    }
  });
});

describe("a store folder whose share socket is not this user's (a symlink planted in a shared folder)", () => {
  const folders = stdioFolders("mcp-share-planted", { "a.txt": "alpha\n" });

  /** A socket elsewhere that answers anything (as a holder would), counting who connects. */
  async function planted(): Promise<{ connections: () => number; close(): Promise<void> }> {
    const dir = await tempDir("byteseek-planted-");
    const path = join(dir.path, "evil.sock");
    let connections = 0;
    const server = createNetServer((s) => {
      connections++;
      s.on("data", () =>
        s.end(
          `${JSON.stringify({ byteseek: "ok", holder: "mcp" })}\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}`,
        ),
      );
    });
    await new Promise<void>((done) => server.listen(path, done));
    await symlink(path, join(folders.store, SHARE_SOCKET));
    return {
      connections: () => connections,
      async close() {
        await rm(join(folders.store, SHARE_SOCKET), { force: true });
        await new Promise((done) => server.close(done));
        await dir.remove();
      },
    };
  }

  it("gets no token from kvspace, which says the store is in use", async () => {
    const held = await openTree({ backend: "classic", location: folders.store });
    const evil = await planted();
    try {
      const r = await runCli(["get", "/byteseek/policy"], {
        env: { ...cliEnv(folders.store), BYTESEEK_TOKEN: "not-for-you" },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("is in use by another process");
      expect(evil.connections()).toBe(0);
    } finally {
      await evil.close();
      await held.close();
    }
  });

  it("gets no relay from byteseek mcp, which exits naming the socket", async () => {
    const held = await openTree({ backend: "classic", location: folders.store });
    const evil = await planted();
    try {
      const { code, stderr } = await mcpExit(folders.env);
      expect(code).not.toBe(0);
      expect(stderr).toContain("is not a socket this user made");
      expect(evil.connections()).toBe(0);
    } finally {
      await evil.close();
      await held.close();
    }
  });
});

describe("the share socket's MCP half", () => {
  it("closes its relays' feed of tree changes and removes the socket when closed", async () => {
    const base = await tempDir("byteseek-share-stale-");
    try {
      const path = join(base.path, SHARE_SOCKET);
      let subscribed = 0;
      const live = {
        subscribe: () => {
          subscribed++;
          return () => subscribed--;
        },
        close() {},
      };
      const shared = await listenShared({
        path,
        // no connection is made: the factory is never asked
        factory: {} as never,
        live: live as never,
        logger: pino({ level: "silent" }),
        workspace: base.path,
        holder: "mcp",
      });
      expect((await stat(path)).isSocket()).toBe(true);
      expect(subscribed).toBe(1);
      await shared?.close();
      expect(subscribed).toBe(0);
      await expect(stat(path)).rejects.toThrow();
    } finally {
      await base.remove();
    }
  });
});
