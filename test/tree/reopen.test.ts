import { ClassicLevel } from "classic-level";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type HistoryLimit, openTree } from "../../tree/index.js";
import type { ExportEntry, Tree, TreeNode } from "../../tree/types.js";
import { int64, json, str } from "../../tree/value.js";
import { expectTreeError, listAll, take } from "./helpers.js";
import { sampleValues } from "./suite/values.js";
import { tempDir } from "./temp-dir.js";

async function exportAll(tree: Tree): Promise<ExportEntry[]> {
  const out: ExportEntry[] = [];
  for await (const entry of tree.export()) out.push(entry);
  return out;
}

/** Every node of the tree, system entries included, by key. */
async function snapshot(tree: Tree): Promise<Map<string, TreeNode | undefined>> {
  const nodes = new Map<string, TreeNode | undefined>();
  const walk = async (dir: string) => {
    nodes.set(dir, await tree.get(dir));
    for (const child of await listAll(tree, dir, { system: true }))
      if (child.kind === "index") await walk(`${dir}${child.name}`);
      else nodes.set(child.key, await tree.get(child.key));
  };
  await walk("/");
  return nodes;
}

describe("tree on classic-level, closed and reopened", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const open: Tree[] = [];
  // Every value keeps history here (by default only those under /byteseek/ do).
  const reopen = async (historyLimit: HistoryLimit = 10) => {
    const tree = await openTree({ backend: "classic", location: dir.path, historyLimit });
    open.push(tree);
    return tree;
  };
  beforeEach(async () => {
    dir = await tempDir("byteseek-reopen-");
  });
  afterEach(async () => {
    for (const tree of open.splice(0)) await tree.close().catch(() => {});
    await dir.remove();
  });

  it("keeps every value, its metadata, history and the revision counter", async () => {
    const first = await reopen();
    const r0 = first.revision();
    let i = 0;
    for (const v of Object.values(sampleValues)) await first.set(`/kinds/${i++}`, v);
    await first.set("/meta/ro", str("locked"), { ro: true, vid: "run-1" });
    await first.set("/meta/‥pc", str("/byteseek/tool/run-1/2"));
    await first.mkindex("/empty/dir/");
    for (let n = 0; n < 3; n++) await first.append("/log/", json({ n }));
    for (let n = 1; n <= 4; n++) await first.set("/versions", int64(BigInt(n)));
    await first.set("/deleted", str("gone"));
    await first.del("/deleted");
    const nodes = await snapshot(first);
    const exported = await exportAll(first);
    const history = await first.history("/versions");
    const deletedHistory = await first.history("/deleted");
    expect(history).toHaveLength(3);
    expect(deletedHistory).toHaveLength(1);
    const rev = first.revision();
    const changes = await take(first.watch("/", { fromRev: r0 + 1 }), rev - r0);
    await first.close();

    const second = await reopen();
    expect(second.revision()).toBe(rev);
    expect(await snapshot(second)).toEqual(nodes);
    expect(await exportAll(second)).toEqual(exported);
    expect(await second.history("/versions")).toEqual(history);
    expect(await second.history("/deleted")).toEqual(deletedHistory);
    // The change log survives too: a watcher can resume across a restart.
    expect(await take(second.watch("/", { fromRev: r0 + 1 }), rev - r0)).toEqual(changes);

    // And writing goes on where it stopped.
    expect(await second.set("/versions", int64(5n))).toMatchObject({ version: 5, rev: rev + 1 });
    expect((await second.append("/log/", json({ n: 3 }))).key).toBe("/log/3");
    await expectTreeError(() => second.set("/meta/ro", str("x")), "TREE_READ_ONLY");
  });

  it("trims the history a value kept to the limit it is opened with, at its next write", async () => {
    const first = await reopen(10);
    for (let n = 1; n <= 8; n++) await first.set("/h/x", int64(BigInt(n)));
    await first.set("/h/y", str("y"));
    await first.set("/h/y", str("y2"));
    expect(await first.history("/h/x")).toHaveLength(7);
    await first.close();
    const second = await reopen({ "/h/": 2 });
    await second.set("/h/x", int64(9n));
    expect((await second.history("/h/x")).map((h) => h.version)).toEqual([8, 7]);
    expect(await second.history("/h/y")).toHaveLength(1); // not written since: kept as it was
    await second.close();
    const third = await reopen(0);
    await third.set("/h/x", int64(10n));
    expect(await third.history("/h/x")).toEqual([]);
  });

  it("keeps the revision counter going after a clear and a reopen", async () => {
    const first = await reopen();
    await first.set("/a", str("a"));
    const cleared = await first.clear();
    await first.close();
    const second = await reopen();
    expect(second.revision()).toBe(cleared.rev);
    expect(await second.get("/a")).toBeUndefined();
    expect((await second.set("/a", str("again"))).rev).toBe(cleared.rev + 1);
  });

  it("upgrades a store from before directories flagged kept history, so re-created keys still find it", async () => {
    const first = await reopen();
    await first.set("/old/a/x", str("x1"));
    await first.del("/old/a/x");
    await first.set("/old/b/y", str("y1"));
    await first.deltree("/old/b/");
    await first.set("/old/c/keep", str("untouched"));
    await first.close();
    // Take the store back to format 1: no layout version in the root, no flags on directories.
    const db = new ClassicLevel<string, string>(dir.path, { keyEncoding: "utf8", valueEncoding: "utf8" });
    let flagged = 0;
    for await (const [sk, raw] of db.iterator({ gte: "n", lt: "o" })) {
      const { fmt, hk, ...rec } = JSON.parse(raw) as Record<string, unknown>;
      if (fmt !== undefined || hk !== undefined) flagged++;
      await db.put(sk, JSON.stringify(rec));
    }
    await db.close();
    expect(flagged).toBeGreaterThanOrEqual(3); // the root, /old/a/ and /old/ were flagged

    const second = await reopen();
    await second.set("/old/a/x", str("x2"));
    await second.set("/old/b/y", str("y2"));
    expect((await second.history("/old/a/x"))[0]).toMatchObject({ value: str("x1"), deleted: true });
    expect((await second.history("/old/b/y"))[0]).toMatchObject({ value: str("y1"), deleted: true });
    expect(await second.get("/old/c/keep")).toMatchObject({ value: str("untouched"), version: 1 });
  });

  it("refuses a second open of a store in use with TREE_LOCKED, saying how to reach it", async () => {
    await reopen();
    const err = await expectTreeError(
      () => openTree({ backend: "classic", location: dir.path }),
      "TREE_LOCKED",
    );
    expect(err.message).toContain(dir.path);
  });
});
