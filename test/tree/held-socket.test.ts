/**
 * A held store folder's socket, the store layer's half (tree/held-socket.ts, tree/held-listen.ts):
 * where it sits, who it lets in, how it sorts a connection into HTTP or a relay, and what it leaves
 * behind. What flows over a relay once it is let in (MCP) is test/mcp/share.test.ts's and
 * relay.test.ts's. In-process, real Unix sockets.
 */
import { chmod, mkdir, stat, writeFile } from "node:fs/promises";
import type { Socket } from "node:net";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HELD_REFUSALS,
  type HeldSocket,
  type HeldSocketOptions,
  listenHeld,
  type RelayHandle,
} from "../../tree/held-listen.js";
import { HolderAnswer, SHARE_SOCKET, sharePath, socketAt } from "../../tree/held-socket.js";
import { exchange } from "../mcp/share-helpers.js";
import { tempDir } from "./temp-dir.js";

const silent = pino({ level: "silent" });

/** Listens at `path` as a run holding the folder, whose credential is `the-token`. */
async function holdAt(path: string, serve: Pick<HeldSocketOptions, "http" | "relay">): Promise<HeldSocket> {
  const socket = await listenHeld({
    path,
    logger: silent,
    workspace: "/work",
    holder: "run",
    credential: (token) => token === "the-token",
    ...serve,
  });
  if (socket === undefined) throw new Error("the socket was not made");
  return socket;
}

/** A relay's server that answers `echo <line>` to the first line it is sent (and notes that line). */
function echo(socket: Socket, lines: string[] = []): RelayHandle {
  let seen = "";
  socket.on("data", (d: Buffer) => {
    seen += d.toString();
    if (seen.endsWith("\n")) {
      lines.push(seen);
      socket.end(`echo ${seen}`);
    }
  });
  return { close: async () => {} };
}

describe("a held folder's socket", () => {
  let base: { path: string; remove(): Promise<void> };
  let held: HeldSocket;
  /** What each relay let in received after its hello, and the HTTP connections handed over. */
  const relayed: string[] = [];
  let httpHanded = 0;
  const hello = (extra: Record<string, unknown>) =>
    `${JSON.stringify({ byteseek: "relay", version: 2, workspace: "/elsewhere", ...extra })}\n`;

  beforeAll(async () => {
    base = await tempDir("byteseek-held-");
    const path = join(base.path, SHARE_SOCKET);
    // what a dead holder left at the path
    await writeFile(path, "left over");
    held = await holdAt(path, {
      http(socket: Socket) {
        httpHanded++;
        socket.end("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
      },
      relay: (socket: Socket) => echo(socket, relayed),
    });
  });

  afterAll(async () => {
    await held.close();
    await base.remove();
  });

  it("replaces what a dead holder left at the path with a socket only this user may use", async () => {
    const st = await stat(held.path);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(await socketAt(held.path)).toBe("own");
  });

  it("lets in a relay with the holder's credential: the holder's answer, then the bytes after the hello reach the relay's server", async () => {
    const r = await exchange(held.path, `${hello({ token: "the-token" })}{"after":"hello"}\n`);
    const [answer, ...rest] = r.answer.split("\n");
    expect(HolderAnswer.parse(JSON.parse(answer as string))).toEqual({
      byteseek: "ok",
      holder: "run",
      workspace: "/work",
    });
    expect(rest.join("\n")).toBe('echo {"after":"hello"}\n');
    expect(relayed).toEqual(['{"after":"hello"}\n']);
  });

  it("refuses a relay without the credential, or with another, and gives it nothing past the refusal", async () => {
    for (const extra of [{}, { token: "not-the-token" }]) {
      const r = await exchange(held.path, `${hello(extra)}{"after":"hello"}\n`);
      expect(r.closed).toBe(true);
      expect(r.answer.trim().split("\n")).toHaveLength(1);
      expect(JSON.parse(r.answer)).toMatchObject({ byteseek: "refused", code: HELD_REFUSALS.unauthorized });
    }
    expect(relayed).toHaveLength(1);
  });

  it("refuses a first line that is no relay's hello (one naming a run, an old version, not JSON)", async () => {
    for (const line of [hello({ token: "the-token", vid: "victim" }), hello({ version: 1 }), "hello\n"]) {
      const r = await exchange(held.path, line);
      expect(JSON.parse(r.answer)).toMatchObject({ byteseek: "refused", code: HELD_REFUSALS.hello });
    }
    expect(relayed).toHaveLength(1);
  });

  it("hands a connection whose first byte starts an HTTP request line to the holder's HTTP server", async () => {
    const r = await exchange(held.path, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    expect(r.answer).toMatch(/^HTTP\/1\.1 204 /);
    expect(httpHanded).toBe(1);
  });

  it("reads an older holder's answer naming a run as a plain ok (the run is named at initialize now)", () => {
    expect(HolderAnswer.parse({ byteseek: "ok", holder: "mcp", vid: "mcp-relay-1a2b" })).toEqual({
      byteseek: "ok",
      holder: "mcp",
    });
  });
});

describe("a held folder's socket whose servers are made at the first connection", () => {
  let base: { path: string; remove(): Promise<void> };
  let held: HeldSocket;
  let failHttp = false;
  /** A while for the client's bytes to arrive before anyone listens for them. */
  const making = () => new Promise((done) => setTimeout(done, 20));

  beforeAll(async () => {
    base = await tempDir("byteseek-held-lazy-");
    held = await holdAt(join(base.path, SHARE_SOCKET), {
      async http(socket: Socket) {
        await making();
        if (failHttp) throw new Error("the HTTP app failed to build");
        let seen = "";
        socket.on("data", (d: Buffer) => {
          seen += d.toString();
          if (seen.endsWith("\r\n\r\n"))
            socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${seen.split("\r\n")[0]}`);
        });
      },
      async relay(socket: Socket) {
        await making();
        return echo(socket);
      },
    });
  });

  afterAll(async () => {
    await held.close();
    await base.remove();
  });

  it("keeps an HTTP connection paused until its server is made: the whole request reaches it", async () => {
    const r = await exchange(held.path, "GET /v1/tree/a HTTP/1.1\r\nHost: localhost\r\n\r\n");
    expect(r.answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nGET \/v1\/tree\/a HTTP\/1\.1$/);
  });

  it("keeps a relay paused until its server is made: the bytes after the hello reach it", async () => {
    const hello = JSON.stringify({ byteseek: "relay", version: 2, workspace: "/work", token: "the-token" });
    const r = await exchange(held.path, `${hello}\n{"after":"hello"}\n`);
    const [answer, ...rest] = r.answer.split("\n");
    expect(JSON.parse(answer as string)).toMatchObject({ byteseek: "ok", holder: "run" });
    expect(rest.join("\n")).toBe('echo {"after":"hello"}\n');
  });

  it("drops a connection whose server could not be made, and serves the next", async () => {
    failHttp = true;
    const dropped = await exchange(held.path, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    expect(dropped).toEqual({ answer: "", closed: true });
    failHttp = false;
    const served = await exchange(held.path, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    expect(served.answer).toMatch(/^HTTP\/1\.1 200 OK/);
  });
});

describe("a held folder's socket path", () => {
  it("sits in the store folder, or in a private folder of this user's when that path is too long for a socket", async () => {
    const base = await tempDir("byteseek-share-path-");
    try {
      expect(await sharePath("/srv/store", {})).toBe(`/srv/store/${SHARE_SOCKET}`);
      const long = `/srv/${"x".repeat(120)}`;
      const runtime = join(base.path, "run");
      await mkdir(runtime, { mode: 0o700 });
      const path = await sharePath(long, { XDG_RUNTIME_DIR: runtime });
      expect(path.startsWith(join(runtime, "byteseek"))).toBe(true);
      expect(Buffer.byteLength(path)).toBeLessThanOrEqual(100);
      expect(await sharePath(long, { XDG_RUNTIME_DIR: runtime })).toBe(path);
      expect((await stat(join(runtime, "byteseek"))).mode & 0o777).toBe(0o700);
      // A folder others may write is not used: anyone could put a socket of theirs there.
      await chmod(join(runtime, "byteseek"), 0o777);
      await expect(sharePath(long, { XDG_RUNTIME_DIR: runtime })).rejects.toThrow(/private folder/);
    } finally {
      await base.remove();
    }
  });

  it("is no holder's when it is a file or a folder, and the holder's own once listened on", async () => {
    const base = await tempDir("byteseek-share-what-");
    try {
      const path = join(base.path, SHARE_SOCKET);
      expect(await socketAt(path)).toBe("absent");
      await writeFile(path, "a file");
      expect(await socketAt(path)).toBe("foreign");
      const held = await listenHeld({
        path,
        logger: silent,
        workspace: base.path,
        holder: "mcp",
        relay: () => ({ close: async () => {} }),
      });
      expect(await socketAt(path)).toBe("own");
      await held?.close();
      expect(await socketAt(path)).toBe("absent");
      // A path taken by a folder: no socket, a warning, and the holder goes on.
      await mkdir(path);
      expect(
        await listenHeld({
          path,
          logger: silent,
          workspace: base.path,
          holder: "mcp",
          relay: () => ({ close: async () => {} }),
        }),
      ).toBeUndefined();
    } finally {
      await base.remove();
    }
  });
});
