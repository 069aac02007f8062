import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTreeError, openTree, parseStoreUrl, resolveStore } from "../../tree/index.js";
import { str } from "../../tree/value.js";
import { cliEnv, tempDirs } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

/** The TREE_INVALID_OPTION error `fn` throws. */
function refusal(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    expect(isTreeError(err, "TREE_INVALID_OPTION")).toBe(true);
    return err as Error;
  }
  throw new Error("expected TREE_INVALID_OPTION, but it went through");
}

describe("parseStoreUrl", () => {
  it("reads etcd URLs with one or more members and an optional prefix", () => {
    expect(parseStoreUrl("etcd://127.0.0.1:2379")).toEqual({
      backend: "etcd",
      endpoints: ["127.0.0.1:2379"],
    });
    expect(parseStoreUrl("etcd://a:1,b,c:3/team/byteseek/")).toEqual({
      backend: "etcd",
      endpoints: ["a:1", "b:2379", "c:3"],
      prefix: "team/byteseek/",
    });
  });

  it("reads http URLs and folders, with ./data by default", () => {
    expect(parseStoreUrl("http://127.0.0.1:7411/")).toEqual({
      backend: "http",
      url: "http://127.0.0.1:7411",
    });
    expect(parseStoreUrl("./store")).toEqual({ backend: "classic", location: "./store" });
    expect(parseStoreUrl("C:\\byteseek\\data")).toEqual({
      backend: "classic",
      location: "C:\\byteseek\\data",
    });
    expect(parseStoreUrl("file:///srv/byteseek")).toEqual({ backend: "classic", location: "/srv/byteseek" });
    expect(parseStoreUrl()).toEqual({ backend: "classic", location: "./data" });
    expect(parseStoreUrl("")).toEqual({ backend: "classic", location: "./data" });
  });

  it("refuses a malformed etcd endpoint, naming it", () => {
    expect(refusal(() => parseStoreUrl("etcd://a b:2379")).message).toMatch(/"a b:2379"/);
    expect(refusal(() => parseStoreUrl("etcd://a,,b")).message).toMatch(/endpoint ""/);
  });

  it("refuses what looks like a URL it cannot open, saying what KVSPACE may be", () => {
    for (const kvspace of ["etcd:", "etcd://", "etcd:/a", "etcd:a:2379"])
      expect(refusal(() => parseStoreUrl(kvspace)).message).toBe(
        `KVSPACE=${kvspace} names no etcd member; use etcd://host:2379[,host2:2379][/prefix]`,
      );
    for (const kvspace of ["http://", "https:///x", "http:host"])
      expect(refusal(() => parseStoreUrl(kvspace)).message).toMatch(
        /is not a server URL; use http:\/\/host:port/,
      );
    for (const kvspace of ["htp://x", "etc://h:2379", "s3://bucket", "data:1"])
      expect(refusal(() => parseStoreUrl(kvspace)).message).toBe(
        `KVSPACE=${kvspace} is neither a folder nor a store URL; use a folder (./data), etcd://host:2379[/prefix] or http://host:port`,
      );
  });
});

describe("resolveStore", () => {
  it("resolves a folder against the working folder, with the embedded store's settings", () => {
    expect(resolveStore({}, "/srv")).toEqual({
      backend: "classic",
      location: "/srv/data",
      sync: "never",
      cacheBytes: 32 * 1024 * 1024,
    });
    expect(
      resolveStore(
        { KVSPACE: "store", BYTESEEK_SYNC: "always", BYTESEEK_CACHE: "1m", BYTESEEK_HISTORY: "/a/=2" },
        "/srv",
      ),
    ).toEqual({
      backend: "classic",
      location: "/srv/store",
      sync: "always",
      cacheBytes: 1024 * 1024,
      historyLimit: { "/a/": 2 },
    });
  });

  it("gives an etcd store its members, prefix and history, and refuses BYTESEEK_SYNC rather than ignore it", () => {
    expect(resolveStore({ KVSPACE: "etcd://h1,h2:2400/t", BYTESEEK_HISTORY: "3" })).toEqual({
      backend: "etcd",
      endpoints: ["h1:2379", "h2:2400"],
      prefix: "t/",
      cacheBytes: 32 * 1024 * 1024,
      historyLimit: 3,
    });
    expect(refusal(() => resolveStore({ KVSPACE: "etcd://h1", BYTESEEK_SYNC: "never" })).message).toBe(
      "BYTESEEK_SYNC does not apply to a store on etcd (KVSPACE=etcd://h1): etcd fsyncs every write to its own log (its --unsafe-no-fsync says otherwise); unset BYTESEEK_SYNC",
    );
    expect(resolveStore({ KVSPACE: "etcd://h1", BYTESEEK_SYNC: "" })).toMatchObject({ backend: "etcd" });
  });

  it("checks each setting's value, naming the variable", () => {
    expect(refusal(() => resolveStore({ BYTESEEK_SYNC: "sometimes" })).message).toBe(
      'BYTESEEK_SYNC must be always or never, got "sometimes"',
    );
    expect(refusal(() => resolveStore({ BYTESEEK_CACHE: "lots" })).message).toBe(
      'BYTESEEK_CACHE must be a size in bytes (or with k/m), got "lots"',
    );
    expect(refusal(() => resolveStore({ KVSPACE: "etcd://h", BYTESEEK_HISTORY: "x" })).message).toMatch(
      /^BYTESEEK_HISTORY: history limit: "x"/,
    );
  });

  it("leaves a server's store settings to the server", () => {
    expect(
      resolveStore({ KVSPACE: "http://127.0.0.1:7411", BYTESEEK_SYNC: "always", BYTESEEK_HISTORY: "3" }),
    ).toEqual({ backend: "http", url: "http://127.0.0.1:7411" });
  });
});

describe("stores on etcd", () => {
  let etcd: EtcdCluster;
  const temps = tempDirs("kvspace-etcd-");
  beforeAll(async () => {
    etcd = await startEtcd();
  }, 60_000);
  afterAll(async () => {
    await temps.removeAll();
    await etcd?.remove();
  });

  it("opens the tree a KVSPACE etcd URL names, under its prefix", async () => {
    const where = parseStoreUrl(`etcd://${etcd.endpoints.join(",")}/via-url`);
    if (where.backend !== "etcd") throw new Error("not etcd");
    let closed = false;
    const tree = await openTree({
      ...where,
      onClose: async () => {
        closed = true;
      },
    });
    await tree.set("/a", str("x"));
    const other = await openTree({ backend: "etcd", endpoints: etcd.endpoints, prefix: "elsewhere/" });
    expect(await other.get("/a")).toBeUndefined();
    const again = await openTree({ ...where });
    expect(await again.get("/a")).toMatchObject({ value: str("x") });
    await again.close();
    await other.close();
    await tree.close();
    expect(closed).toBe(true);
  });

  it("runs kvspace on etcd:// (the tree on etcd, no folder made in the working folder)", async () => {
    const cwd = await temps.make();
    const env = cliEnv(`etcd://${etcd.endpoints[0]}/cli`);
    expect(await runInProcess(["set", "/notes/today", "string:on etcd"], { env, cwd })).toMatchObject({
      stderr: "",
      code: 0,
    });
    expect(await runInProcess(["get", "/notes/today"], { env, cwd })).toMatchObject({
      stdout: "/notes/today\tchar/utf8:on etcd\n",
      code: 0,
    });
    expect((await runInProcess(["append", "/queue/", "int:1"], { env, cwd })).stdout).toBe("/queue/0\n");
    expect(await readdir(cwd)).toEqual([]);
    const tree = await openTree({ backend: "etcd", endpoints: etcd.endpoints, prefix: "cli/" });
    try {
      expect(await tree.get("/notes/today")).toMatchObject({ value: str("on etcd"), version: 1 });
    } finally {
      await tree.close();
    }
  });

  it("refuses a misplaced or malformed store setting before touching any store", async () => {
    const cwd = await temps.make();
    const etcdUrl = `etcd://${etcd.endpoints[0]}/cli-refused`;
    for (const [extra, message] of [
      [
        { KVSPACE: etcdUrl, BYTESEEK_SYNC: "always" },
        `BYTESEEK_SYNC does not apply to a store on etcd (KVSPACE=${etcdUrl}): etcd fsyncs every write to its own log (its --unsafe-no-fsync says otherwise); unset BYTESEEK_SYNC\n`,
      ],
      [
        { KVSPACE: "etcd:" },
        "KVSPACE=etcd: names no etcd member; use etcd://host:2379[,host2:2379][/prefix]\n",
      ],
      [
        { KVSPACE: "htp://x" },
        "KVSPACE=htp://x is neither a folder nor a store URL; use a folder (./data), etcd://host:2379[/prefix] or http://host:port\n",
      ],
    ] as const)
      expect(await runInProcess(["set", "/k", "int:1"], { env: cliEnv("unused", extra), cwd })).toEqual({
        stdout: "",
        stderr: message,
        code: 1,
        signal: null,
      });
    expect(existsSync(join(cwd, "etcd:"))).toBe(false);
    expect(await readdir(cwd)).toEqual([]);
    const tree = await openTree({ backend: "etcd", endpoints: etcd.endpoints, prefix: "cli-refused/" });
    try {
      expect(await tree.get("/k")).toBeUndefined();
    } finally {
      await tree.close();
    }
  });
});
