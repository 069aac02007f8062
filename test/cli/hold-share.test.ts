/**
 * The socket of a process holding a store folder builds its HTTP app at the first connection
 * (cli/hold-share.ts). A build that fails must not refuse the socket for the rest of the run: it is
 * logged once, its connections dropped, and the next connection builds it again. A real store, a
 * real byteseek, the real app behind a real Unix socket; only the first build is made to fail.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp, holdShare, madeOnUse } from "../../cli/hold-share.js";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { createHttpTree } from "../../tree/http/index.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import { captureLogger } from "../server/helpers.js";
import { tempDirs } from "./cli-server.js";

const temps = tempDirs("byteseek-hold-share-");
const TOKEN = "hold-share-token-7c1e";

describe("a held folder's socket whose HTTP app failed to build", () => {
  let tree: Tree;
  let bs: Byteseek;
  let folder: string;
  beforeAll(async () => {
    folder = join(await temps.make(), "store");
    tree = await openTree({ backend: "classic", location: folder });
    const logs = captureLogger();
    bs = await createByteseek({
      tree,
      workspace: await temps.make(),
      logger: logs.logger,
      env: {},
      seed: false,
    });
    await tree.set("/held/a", str("here"));
  });
  afterAll(async () => {
    await bs.close();
    await tree.close();
    await temps.removeAll();
  });

  it("logs the failure once, drops the connection, and builds it again at the next connection", async () => {
    const logs = captureLogger();
    let builds = 0;
    const share = await holdShare({
      tree,
      byteseek: bs,
      folder,
      env: { BYTESEEK_TOKEN: TOKEN },
      logger: logs.logger,
      holder: "run",
      buildHttp: async (deps) => {
        if (++builds === 1) throw new Error("the HTTP app could not be loaded");
        return buildHttpApp(deps);
      },
    });
    const client = createHttpTree({ url: "http://localhost", socketPath: share.path, token: TOKEN });
    try {
      await expect(client.get("/held/a")).rejects.toMatchObject({ code: "TREE_UNAVAILABLE" });
      const failures = logs.lines.filter((l) => String(l.msg).includes("could not build its HTTP API"));
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ level: 40, err: { message: "the HTTP app could not be loaded" } });
      // Before, every later connection was dropped: the failed build was kept.
      expect(await client.get("/held/a")).toMatchObject({ key: "/held/a", value: { kind: "char/utf8" } });
      expect(await client.set("/held/b", str("too"))).toMatchObject({ key: "/held/b" });
      expect(builds).toBe(2);
    } finally {
      await client.close();
      await share.close();
    }
  });
});

describe("madeOnUse", () => {
  it("makes once for every use that waits on it, reports a failure once, and makes again at the next use", async () => {
    const failures: unknown[] = [];
    let makes = 0;
    let fail = true;
    const value = madeOnUse(
      async () => {
        makes++;
        await new Promise((r) => setTimeout(r, 10));
        if (fail) throw new Error(`make ${makes} failed`);
        return makes;
      },
      (err) => failures.push(err),
    );
    const waiting = [value.get(), value.get(), value.get()].map((p) => p.catch((err: Error) => err.message));
    expect(await Promise.all(waiting)).toEqual(["make 1 failed", "make 1 failed", "make 1 failed"]);
    expect(failures).toHaveLength(1);
    fail = false;
    expect(await Promise.all([value.get(), value.get()])).toEqual([2, 2]);
    expect(await value.get()).toBe(2);
    expect(makes).toBe(2);
  });
});
