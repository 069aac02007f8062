import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTree, parseStoreUrl } from "../../tree/index.js";
import { str } from "../../tree/value.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

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
    expect(parseStoreUrl()).toEqual({ backend: "classic", location: "./data" });
  });

  it("refuses a malformed etcd endpoint, naming it", () => {
    expect(() => parseStoreUrl("etcd://a b:2379")).toThrow(/a b/);
    expect(() => parseStoreUrl("etcd://")).toThrow(/endpoint/);
  });
});

describe("openTree with the etcd backend", () => {
  let etcd: EtcdCluster;
  beforeAll(async () => {
    etcd = await startEtcd();
  }, 60_000);
  afterAll(async () => {
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
});
