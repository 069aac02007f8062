/**
 * The scratch store a recorded replay runs its loop on (agent/replay/scratch-store.ts): the run's
 * own keys as objects, with the tree's judgements — versions, create-only, read-only, compares —
 * dense appends, natural-order listings and all-or-nothing transactions at one revision.
 */
import { describe, expect, it } from "vitest";
import { createScratchStore } from "../../agent/replay/scratch-store.js";
import { runOwns } from "../../agent/replay/scratch-tree.js";
import { isTreeError } from "../../tree/errors.js";
import { json, str } from "../../tree/value.js";

const store = () => createScratchStore(runOwns("r1"));
const session = "/byteseek/session/r1/";

describe("the recorded replay's scratch store", () => {
  it("appends densely, lists in natural order page by page, and counts a directory's children", async () => {
    const s = store();
    for (let i = 0; i < 12; i++) await s.append(session, json({ i }), { vid: "r1" });
    const first = await s.list(session, { limit: 10 });
    expect(first.children.map((c) => c.name)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
    const rest = await s.list(session, { after: first.next! });
    expect(rest.children.map((c) => c.name)).toEqual(["10", "11"]);
    expect(rest.next).toBeUndefined();
    expect(await s.get(session)).toMatchObject({ kind: "index", count: 12 });
    await expect(s.list("/byteseek/tool/r1/")).rejects.toMatchObject({ code: "TREE_NOT_FOUND" });
  });

  it("refuses as the tree does: a stale version, a read-only key without force", async () => {
    const s = store();
    const a = await s.set("/vthread/r1/status", str("running"), { vid: "r1" });
    await s.set("/vthread/r1/status", str("done"), { ifVersion: a.version });
    const stale = await s.set("/vthread/r1/status", str("x"), { ifVersion: a.version }).catch((e) => e);
    expect(isTreeError(stale, "TREE_VERSION_MISMATCH")).toBe(true);
    const { key } = await s.append("/byteseek/tool/r1/", json({ n: 0 }), { ro: true });
    await expect(s.set(key, json({ n: 1 }))).rejects.toMatchObject({ code: "TREE_READ_ONLY" });
    expect((await s.set(key, json({ n: 1 }), { force: true })).version).toBe(2);
  });

  it("runs a transaction's writes at one revision, or none of them when one fails or a compare does not hold", async () => {
    const s = store();
    const usage = "/byteseek/usage/r1";
    const ok = await s.txn({
      compare: [{ key: usage, target: "version", value: 0 }],
      success: [
        { op: "append", key: session, value: json({ m: 1 }) },
        { op: "set", key: usage, value: json({ steps: 1 }), ro: true },
      ],
    });
    expect(ok.succeeded).toBe(true);
    const [m, u] = [await s.get(`${session}0`), await s.get(usage)];
    expect(m?.modRev).toBe(ok.rev);
    expect(u?.modRev).toBe(ok.rev);
    const raced = await s.txn({
      compare: [{ key: usage, target: "version", value: 0 }],
      success: [{ op: "append", key: session, value: json({ m: 2 }) }],
      failure: [{ op: "get", key: usage }],
    });
    expect(raced).toMatchObject({ succeeded: false, results: [{ version: 1 }] });
    // the second op fails (read-only without force): the append before it is undone
    await expect(
      s.txn({
        success: [
          { op: "append", key: session, value: json({ m: 3 }) },
          { op: "set", key: usage, value: json({ steps: 2 }) },
        ],
      }),
    ).rejects.toMatchObject({ code: "TREE_READ_ONLY" });
    expect((await s.list(session)).children.map((c) => c.name)).toEqual(["0"]);
    expect(await s.get(session)).toMatchObject({ count: 1 });
    expect(s.revision()).toBe(ok.rev);
  });
});
