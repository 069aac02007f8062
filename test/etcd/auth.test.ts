/**
 * An etcd with auth enabled: the tree logs in as the user the settings name (BYTESEEK_ETCD_USER,
 * BYTESEEK_ETCD_PASSWORD), on the fast lane (its own connections: rpc.ts trades the password for a
 * token and sends it with every call) and on the reference lane (etcd3's clients) alike, logs in
 * again when etcd stops taking its token, and without a user is refused saying which settings to give.
 */
import type { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectEtcd } from "../../tree/etcd/client.js";
import { createEtcdTree } from "../../tree/etcd/etcd-tree.js";
import { resolveStore } from "../../tree/store-config.js";
import type { Tree } from "../../tree/types.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

const ROOT = { username: "root", password: "r00t-secret" };
/** Simple tokens expire after this many idle seconds (etcd's --auth-token-ttl; 300 by default). */
const TOKEN_TTL_S = 1;

let etcd: EtcdCluster;

beforeAll(async () => {
  etcd = await startEtcd({ args: ["--auth-token=simple", `--auth-token-ttl=${TOKEN_TTL_S}`] });
  const admin: Etcd3 = connectEtcd({ endpoints: etcd.endpoints });
  try {
    await admin.role("root").create();
    await (await admin.user(ROOT.username).create(ROOT.password)).addRole("root");
    await admin.auth.authEnable();
  } finally {
    admin.close();
  }
}, 60_000);

afterAll(async () => {
  await etcd?.remove();
});

const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each([
  ["the fast lane", true],
  ["the reference lane", false],
] as const)("a tree on an etcd with auth, %s", (_lane, fast) => {
  let tree: Tree;
  beforeAll(async () => {
    tree = await createEtcdTree({ endpoints: etcd.endpoints, prefix: `auth-${fast}/`, auth: ROOT, fast });
  });
  afterAll(async () => {
    await tree?.close();
  });

  it("logs in as the user given: writes, reads back through etcd, lists and watches", async () => {
    const written = await tree.set("/a/b", { kind: "char/utf8", value: "hé" });
    expect(await tree.get("/a/b", { consistency: "linearizable" })).toMatchObject({
      value: { kind: "char/utf8", value: "hé" },
    });
    expect((await tree.list("/a/")).children.map((c) => c.name)).toEqual(["b"]);
    const ac = new AbortController();
    let first: unknown;
    for await (const batch of tree.watch("/a/", { fromRev: written.rev, signal: ac.signal })) {
      first = batch;
      break;
    }
    ac.abort();
    expect((first as { events: unknown[] }).events).toContainEqual(
      expect.objectContaining({ key: "/a/b", type: "put" }),
    );
  });

  it("logs in again once etcd no longer takes its token (expired while idle), and the write goes through", async () => {
    await tree.set("/t/1", { kind: "int64", value: 1n });
    await idle(TOKEN_TTL_S * 1000 + 1500);
    const after = await tree.set("/t/2", { kind: "int64", value: 2n });
    expect(after.version).toBe(1);
    expect(await tree.get("/t/2", { consistency: "linearizable" })).toMatchObject({
      value: { kind: "int64", value: 2n },
    });
  });
});

describe("an etcd with auth, and no user given", () => {
  it("refuses the tree at start, naming the settings to give", async () => {
    const err = await createEtcdTree({
      endpoints: etcd.endpoints,
      prefix: "anon/",
      unavailableAfterMs: 500,
    }).then(
      (t) => t.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "TREE_UNAVAILABLE" });
    expect((err as Error).message).toMatch(/BYTESEEK_ETCD_USER.*BYTESEEK_ETCD_PASSWORD/);
  });

  it("reads the user from BYTESEEK_ETCD_USER and BYTESEEK_ETCD_PASSWORD, and a password alone is refused", () => {
    const spec = resolveStore(
      { KVSPACE: "etcd://127.0.0.1:2379", BYTESEEK_ETCD_USER: "app", BYTESEEK_ETCD_PASSWORD: "pw" },
      "/srv",
    );
    expect(spec).toMatchObject({ backend: "etcd", auth: { username: "app", password: "pw" } });
    expect(() =>
      resolveStore({ KVSPACE: "etcd://127.0.0.1:2379", BYTESEEK_ETCD_PASSWORD: "pw" }, "/srv"),
    ).toThrow(/BYTESEEK_ETCD_PASSWORD is set without BYTESEEK_ETCD_USER/);
  });
});
