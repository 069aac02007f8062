/**
 * #35: what kvspace says about a store folder another process holds. It reaches the holder it finds
 * (its share socket), and when it finds none its hint never points at a server: not the one
 * listening on BYTESEEK_PORT (it may hold another store), not a socket a dead holder left.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../server/main.js";
import { sharePath } from "../../tree/held-socket.js";
import { openTree } from "../../tree/index.js";
import { int64 } from "../../tree/value.js";
import { cliEnv, tempDirs } from "./cli-server.js";
import { runInProcess } from "./in-process.js";

const temps = tempDirs("kvspace-hint-");

describe("kvspace's hint on a held store folder", () => {
  /** A real server on its own store folder, listening on a loopback port. */
  let server: RunningServer;
  let served: string;
  beforeAll(async () => {
    const dir = await temps.make();
    served = join(dir, "store");
    server = await startServer({
      env: { KVSPACE: served, BYTESEEK_WORKSPACE: dir, BYTESEEK_PORT: "0", BYTESEEK_SYNC: "never" },
      logger: pino({ level: "silent" }),
      handleSignals: false,
    });
  });
  afterAll(async () => {
    await server?.close();
    await temps.removeAll();
  });

  it("names no server it did not find: not the one on BYTESEEK_PORT (another store's), not the socket a dead holder left", async () => {
    const store = join(await temps.make(), "store");
    // the holder: this process, serving no socket
    const held = await openTree({ backend: "classic", location: store });
    try {
      // a socket file left by a holder that was killed: it is there, and nothing answers on it
      const stale = await sharePath(store);
      const killed = spawnSync(process.execPath, [
        "-e",
        `require("node:net").createServer().listen(${JSON.stringify(stale)}, () => process.kill(process.pid, "SIGKILL"))`,
      ]);
      expect(killed.signal).toBe("SIGKILL");
      expect(existsSync(stale)).toBe(true);
      const port = new URL(server.url).port;
      const result = await runInProcess(["get", "/held"], {
        env: cliEnv(store, { BYTESEEK_HOST: "127.0.0.1", BYTESEEK_PORT: port }),
      });
      expect(result).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr).toMatch(
        new RegExp(
          `^the store at ${store} is in use by another process that serves no byteseek socket beside it\n`,
        ),
      );
      // an address it could name is only a placeholder
      expect(result.stderr).toContain("KVSPACE=http://<its host:port>");
      for (const found of [server.url, `:${port}`, "7411", stale]) expect(result.stderr).not.toContain(found);
    } finally {
      await held.close();
    }
  });

  it("reaches the holder it finds, the server on its folder, with no hint at all", async () => {
    const env = cliEnv(served);
    expect(await runInProcess(["set", "/found/n", "int:35"], { env })).toMatchObject({ code: 0, stderr: "" });
    // the write is the server's: it went through the holder found beside the folder
    expect(await server.tree.get("/found/n")).toMatchObject({ value: int64(35n) });
    expect(await runInProcess(["get", "/found/n"], { env })).toMatchObject({ code: 0, stderr: "" });
  });
});
