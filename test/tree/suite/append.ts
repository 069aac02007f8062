import { describe, expect, it } from "vitest";
import { TreeError } from "../../../tree/errors.js";
import { int64, json, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, getDir, getValue, listAll, names } from "../helpers.js";

export function appendSuite(ctx: SuiteContext): void {
  describe("append", () => {
    it("creates dense children 0, 1, 2, … creating the directory when absent", async () => {
      const tree = await ctx.open();
      const keys: string[] = [];
      for (let i = 0; i < 12; i++) {
        const before = tree.revision();
        const res = await tree.append("/byteseek/tool/run1/", json({ call: i }));
        expect(res).toMatchObject({ version: 1, rev: before + 1 });
        keys.push(res.key);
      }
      expect(keys).toEqual(Array.from({ length: 12 }, (_v, i) => `/byteseek/tool/run1/${i}`));
      expect(await names(tree, "/byteseek/tool/run1/")).toEqual(
        Array.from({ length: 12 }, (_v, i) => `${i}`),
      );
      expect((await getValue(tree, "/byteseek/tool/run1/11")).value).toEqual(json({ call: 11 }));
      expect((await getDir(tree, "/byteseek/tool/")).count).toBe(1);
    });

    it("numbers each directory on its own", async () => {
      const tree = await ctx.open();
      expect((await tree.append("/a/", str("x"))).key).toBe("/a/0");
      expect((await tree.append("/b/", str("x"))).key).toBe("/b/0");
      expect((await tree.append("/a/", str("y"))).key).toBe("/a/1");
      expect((await tree.append("/a/sub/", str("z"))).key).toBe("/a/sub/0");
      expect((await tree.append("/a/", str("w"))).key).toBe("/a/2");
    });

    it("marks appended children ro when asked", async () => {
      const tree = await ctx.open();
      const res = await tree.append("/log/", str("entry"), { ro: true });
      expect((await getValue(tree, res.key)).ro).toBe(true);
      await expectTreeError(() => tree.set(res.key, str("rewrite")), "TREE_READ_ONLY");
    });

    it("gives 32 concurrent appenders unique dense numbers", async () => {
      const tree = await ctx.open();
      const results = await Promise.all(
        Array.from({ length: 32 }, (_v, i) => tree.append("/q/", int64(BigInt(i)))),
      );
      const keys = results.map((r) => r.key).sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)));
      expect(keys).toEqual(Array.from({ length: 32 }, (_v, i) => `/q/${i}`));
      expect(new Set(results.map((r) => r.rev)).size).toBe(32);
      // Each child holds the value of the call that was told its key.
      for (const [i, r] of results.entries())
        expect((await getValue(tree, r.key)).value).toEqual(int64(BigInt(i)));
      expect((await getDir(tree, "/q/")).count).toBe(32);
    });
  });

  describe("concurrent writers", () => {
    it("loses no update under 32 concurrent compare-and-set writers, every success a distinct version", async () => {
      const tree = await ctx.open();
      await tree.set("/counter", int64(0n));
      // One success each: 32 writers still contend (528 attempts in all); three each made it ~2,400.
      const perWriter = 1;
      const versions: number[] = [];
      const writer = async () => {
        for (let done = 0; done < perWriter; ) {
          const node = await getValue(tree, "/counter");
          try {
            const res = await tree.set("/counter", int64((node.value.value as bigint) + 1n), {
              ifVersion: node.version,
            });
            versions.push(res.version);
            done++;
          } catch (err) {
            if (!(err instanceof TreeError) || err.code !== "TREE_VERSION_MISMATCH") throw err;
          }
        }
      };
      await Promise.all(Array.from({ length: 32 }, writer));
      const total = 32 * perWriter;
      expect(new Set(versions).size).toBe(total);
      expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_v, i) => i + 2));
      expect(await getValue(tree, "/counter")).toMatchObject({
        value: int64(BigInt(total)),
        version: total + 1,
      });
    });

    it("loses no update under 32 concurrent transactions that compare the version before writing", async () => {
      const tree = await ctx.open();
      await tree.set("/counter", int64(0n));
      // One success each: 32 writers still contend (528 attempts in all); three each made it ~2,400.
      const perWriter = 1;
      const writer = async () => {
        for (let done = 0; done < perWriter; ) {
          const node = await getValue(tree, "/counter");
          const res = await tree.txn({
            compare: [{ key: "/counter", target: "version", value: node.version }],
            success: [{ op: "set", key: "/counter", value: int64((node.value.value as bigint) + 1n) }],
          });
          if (res.succeeded) done++;
        }
      };
      await Promise.all(Array.from({ length: 32 }, writer));
      expect(await getValue(tree, "/counter")).toMatchObject({
        value: int64(BigInt(32 * perWriter)),
        version: 32 * perWriter + 1,
      });
    });

    it("never reuses an appended number, even after the last child is deleted", async () => {
      const tree = await ctx.open();
      for (let i = 0; i < 3; i++) await tree.append("/q/", int64(BigInt(i)));
      await tree.del("/q/2");
      await tree.del("/q/1");
      expect((await tree.append("/q/", int64(3n))).key).toBe("/q/3");
    });

    it("lets exactly one of 32 concurrent create-only writers win", async () => {
      const tree = await ctx.open();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 32 }, (_v, i) => tree.set("/once", int64(BigInt(i)), { create: true })),
      );
      const won = outcomes.filter((o) => o.status === "fulfilled");
      expect(won).toHaveLength(1);
      for (const o of outcomes)
        if (o.status === "rejected") expect((o.reason as TreeError).code).toBe("TREE_EXISTS");
      expect((await getValue(tree, "/once")).version).toBe(1);
    });

    it("counts every child when 32 concurrent sets create siblings under new parents", async () => {
      const tree = await ctx.open();
      await Promise.all(Array.from({ length: 32 }, (_v, i) => tree.set(`/c/${i}/leaf`, int64(BigInt(i)))));
      expect((await getDir(tree, "/c/")).count).toBe(32);
      expect(await names(tree, "/c/")).toEqual(Array.from({ length: 32 }, (_v, i) => `${i}/`));
      expect((await getDir(tree, "/")).count).toBe(1);
      const revs = new Set<number>();
      for (let i = 0; i < 32; i++) revs.add((await getValue(tree, `/c/${i}/leaf`)).modRev);
      expect(revs.size).toBe(32);
    });

    it("stays consistent under concurrent mixed writes: counts match listings, revisions are unique", async () => {
      const tree = await ctx.open();
      const start = tree.revision();
      const dirs = ["/m/", "/m/a/", "/m/b/", "/m/a/c/"];
      const writes: Array<Promise<unknown>> = [];
      for (let i = 0; i < 96; i++) {
        const dir = dirs[i % dirs.length] ?? "/m/";
        const n = i % 7;
        if (i % 11 === 10) writes.push(tree.deltree(dir === "/m/" ? "/m/b/" : dir));
        else if (i % 5 === 4) writes.push(tree.del(`${dir}${n}`));
        else if (i % 3 === 2) writes.push(tree.append(`${dir}log/`, int64(BigInt(i))));
        else writes.push(tree.set(`${dir}${n}`, int64(BigInt(i))));
      }
      const results = (await Promise.all(writes)) as Array<{ rev: number }>;
      expect(tree.revision()).toBeGreaterThan(start);
      const check = async (dir: string): Promise<void> => {
        const children = await listAll(tree, dir, { system: true });
        expect((await getDir(tree, dir)).count, dir).toBe(children.length);
        for (const child of children) if (child.kind === "index") await check(`${dir}${child.name}`);
      };
      await check("/");
      const changed = results.map((r) => r.rev).filter((rev) => rev > start);
      expect(Math.max(...changed)).toBe(tree.revision());
    });

    it("never leaves a value without its directory when a set races a deltree of its parent", async () => {
      const tree = await ctx.open();
      for (let round = 0; round < 20; round++) {
        await tree.set("/race/seed", int64(0n));
        await Promise.all([
          tree.set(`/race/x${round}`, int64(BigInt(round))),
          tree.deltree("/race/"),
          tree.set(`/race/y${round}`, int64(BigInt(round))),
        ]);
        const dir = await tree.get("/race/");
        for (const key of [`/race/x${round}`, `/race/y${round}`])
          if ((await tree.get(key)) !== undefined) expect(dir, `${key} exists without /race/`).toBeDefined();
        if (dir !== undefined)
          expect((await getDir(tree, "/race/")).count).toBe((await listAll(tree, "/race/")).length);
      }
    });

    it("keeps a directory's count right under concurrent sets and deletes of its children", async () => {
      const tree = await ctx.open();
      for (let i = 0; i < 16; i++) await tree.set(`/n/${i}`, int64(BigInt(i)));
      await Promise.all([
        ...Array.from({ length: 16 }, (_v, i) => tree.del(`/n/${i}`)),
        ...Array.from({ length: 16 }, (_v, i) => tree.set(`/n/new${i}`, int64(BigInt(i)))),
      ]);
      expect((await getDir(tree, "/n/")).count).toBe(16);
      expect((await names(tree, "/n/")).every((n) => n.startsWith("new"))).toBe(true);
    });
  });
}
