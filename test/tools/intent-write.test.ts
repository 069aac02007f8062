/**
 * A tree write's started record is committed in the write's own transaction (tools/call/
 * intent-write.ts): a crash keeps both or neither, a write that fails stores neither, and the
 * record never costs the call a commit of its own.
 */
import { ClassicLevel } from "classic-level";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CarriedRecord, carryingRecord } from "../../tools/call/intent-write.js";
import { seedTools } from "../../tools/catalogue/seed.js";
import { recordsDir } from "../../tools/records/records.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import { createLevelTree } from "../../tree/level-tree.js";
import type { Tree, TxnOp } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import { silent, tempDir } from "./helpers.js";

/** A small store: a value of more than 4 KB is refused (TREE_VALUE_TOO_LARGE). */
const MAX_VALUE_BYTES = 4096;

describe("a tree write's started record, in the write's own transaction", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let ws: Awaited<ReturnType<typeof tempDir>>;
  let tree: Tree;
  let runtime: Runtime;
  /** What the runtime's failpoint does at a call's effect: nothing, or the process "dies" there. */
  let dieAtEffect = false;

  beforeAll(async () => {
    dir = await tempDir("byteseek-intent-write-");
    ws = await tempDir("byteseek-intent-write-ws-");
    const db = new ClassicLevel<string, string>(dir.path, { keyEncoding: "utf8", valueEncoding: "utf8" });
    await db.open();
    tree = await createLevelTree(db, { maxValueBytes: MAX_VALUE_BYTES });
    const builtins = createTreeTools();
    await seedTools({ tree, builtins });
    runtime = createRuntime({
      tree,
      builtins,
      logger: silent,
      workspace: ws.path,
      failpoint: (point) => {
        if (point === "effect" && dieAtEffect) throw new Error("the process died before the effect");
      },
    });
  });
  afterEach(() => {
    dieAtEffect = false;
  });
  afterAll(async () => {
    await runtime.close();
    await tree.close();
    await dir.remove();
    await ws.remove();
  });

  /** The value stored at `key` (undefined: absent or a directory). */
  async function valueAt(key: string) {
    const node = await tree.get(key);
    return node && node.kind !== "index" ? node.value : undefined;
  }

  /** The run's records: key, state and how many times each was written (its version). */
  async function recordsOf(vid: string) {
    const { children } = await tree.list(recordsDir(vid));
    return children.map((c) => ({
      key: c.key,
      version: c.version,
      state: c.kind === "json" ? (c.value?.value as { state?: string } | undefined)?.state : undefined,
    }));
  }

  it("a write whose ifVersion no longer holds stores neither its value nor a started record, and says why", async () => {
    await tree.set("/cas/k", str("theirs"));
    const r = await runtime.call("tree.set", { key: "/cas/k", value: "mine", ifVersion: 7 }, { vid: "cas" });
    expect(r.isError).toBe(true);
    expect(r.details.code).toBe("version_mismatch");
    expect(r.text).toMatch(/tree\.get it again/);
    expect((await tree.get("/cas/k"))?.version).toBe(1);
    // the done record is the record's only write: no started record came before it
    expect(await recordsOf("cas")).toEqual([{ key: `${recordsDir("cas")}0`, version: 1, state: "done" }]);
  });

  it("a call that dies before its write leaves neither the value nor a record of its start", async () => {
    dieAtEffect = true;
    await expect(
      runtime.call("tree.set", { key: "/died/k", value: "v" }, { vid: "died" }),
    ).resolves.toMatchObject({ isError: true });
    expect(await tree.get("/died/k")).toBeUndefined();
    expect((await recordsOf("died")).filter((r) => r.state === "started")).toEqual([]);
  });

  it("a write that lands leaves its started record replaced by the done one, written twice in all", async () => {
    const r = await runtime.call("tree.set", { key: "/landed/k", value: "v" }, { vid: "landed" });
    expect(r.kind, r.text).toBe("ok");
    expect(await valueAt("/landed/k")).toEqual(str("v"));
    expect(await recordsOf("landed")).toEqual([{ key: r.record, version: 2, state: "done" }]);
  });

  it("a started record too large for the store goes in its small form with the write, which lands", async () => {
    // 3 KB fits the store; the record holding it as an argument, with everything else, does not
    const value = "x".repeat(3000);
    const r = await runtime.call("tree.set", { key: "/big/k", value }, { vid: "big" });
    expect(r.kind, r.text).toBe("ok");
    expect(await valueAt("/big/k")).toEqual(str(value));
  });

  it("a value too large for the store is refused as such, with no record of a start", async () => {
    const r = await runtime.call("tree.set", { key: "/huge/k", value: "y".repeat(5000) }, { vid: "huge" });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/over the limit/);
    expect(await tree.get("/huge/k")).toBeUndefined();
    expect((await recordsOf("huge")).map((x) => x.state)).toEqual(["done"]);
  });

  describe("the carrying tree itself", () => {
    /** A record that notes where it landed, and whether it was stored alone. */
    function carried(vid: string) {
      const seen = { landed: [] as string[], alone: 0, before: 0 };
      const record: CarriedRecord = {
        op: (): TxnOp => ({ op: "append", key: recordsDir(vid), value: str("started"), vid, ro: true }),
        before: () => {
          seen.before++;
        },
        landed: (key) => {
          seen.landed.push(key);
        },
        async alone() {
          seen.alone++;
          seen.landed.push((await tree.append(recordsDir(vid), str("started"), { vid, ro: true })).key);
        },
      };
      return { seen, t: carryingRecord(tree, record) };
    }

    it("carries the record on the first of two writes made at once; the second waits and goes alone", async () => {
      const { seen, t } = carried("two");
      const [a, b] = await Promise.all([t.set("/two/a", str("1")), t.set("/two/b", str("2"))]);
      expect(seen.landed).toEqual([`${recordsDir("two")}0`]);
      expect(seen.before).toBe(1);
      expect(b.rev).toBeGreaterThan(a.rev);
      expect((await tree.list(recordsDir("two"))).children).toHaveLength(1);
      // the record and the first write are one revision
      expect((await tree.get(`${recordsDir("two")}0`))?.modRev).toBe(a.rev);
    });

    it("carries it again after a first write that failed, which stored nothing", async () => {
      const { seen, t } = carried("again");
      await tree.set("/again/k", str("v"));
      await expect(t.set("/again/k", str("w"), { ifVersion: 5 })).rejects.toMatchObject({
        code: "TREE_VERSION_MISMATCH",
      });
      expect(seen.landed).toEqual([]);
      await expect(t.del("/again/k", { ifVersion: 1 })).resolves.toMatchObject({ deleted: true });
      expect(seen.landed).toEqual([`${recordsDir("again")}0`]);
    });

    it("stores the record alone first for a write it cannot join (a deltree), and never after it", async () => {
      const { seen, t } = carried("alone");
      await tree.set("/alone/d/x", str("v"));
      await t.deltree("/alone/d/");
      expect(seen.alone).toBe(1);
      const record = await tree.get(`${recordsDir("alone")}0`);
      expect(record).toBeDefined();
      expect(await tree.get("/alone/d/")).toBeUndefined();
    });

    it("calls a tree that keeps private state on `this` as itself, for reads and for writes", async () => {
      /** A tree as a class with a private field: `this` must be the instance, never the proxy. */
      class Fenced {
        readonly #inner: Tree;
        constructor(inner: Tree) {
          this.#inner = inner;
        }
        get(key: string) {
          return this.#inner.get(key);
        }
        txn(req: Parameters<Tree["txn"]>[0]) {
          return this.#inner.txn(req);
        }
      }
      const record: CarriedRecord = {
        op: (): TxnOp => ({ op: "append", key: recordsDir("fenced"), value: str("started") }),
        before: () => {},
        landed: () => {},
        alone: async () => {},
      };
      const t = carryingRecord(new Fenced(tree) as unknown as Tree, record);
      await t.set("/fenced/k", str("v"));
      expect((await t.get("/fenced/k"))?.version).toBe(1);
    });

    it("puts the record at the head of both branches of a transaction, and hides its result", async () => {
      const { seen, t } = carried("txn");
      const r = await t.txn({
        compare: [{ key: "/txn/k", target: "exists", value: true }],
        success: [{ op: "set", key: "/txn/k", value: str("s") }],
        failure: [{ op: "set", key: "/txn/k", value: str("f") }],
      });
      expect(r.succeeded).toBe(false);
      expect(r.results).toHaveLength(1);
      expect(await valueAt("/txn/k")).toEqual(str("f"));
      expect(seen.landed).toEqual([`${recordsDir("txn")}0`]);
    });
  });
});
