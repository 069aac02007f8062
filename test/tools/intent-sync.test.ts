/**
 * At sync always, a call's `started` record is fsynced on its own only when its loss could matter:
 * edits and anything of unknown effect (shell, mcp, llm) keep the fsync; reads and http calls (sent
 * with their Idempotency-Key) commit it without one, and it reaches the disk with the next synced
 * commit (the call's result). A tree write commits it in its own write's commit (intent-write.ts). Observed on the real classic-level store: every batch
 * the tree writes, with the `sync` it was written with.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ClassicLevel } from "classic-level";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createEditTools } from "../../tools/edit/index.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createShellTools } from "../../tools/shell/index.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import { createLevelTree } from "../../tree/level-tree.js";
import type { Tree } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import { declare, grantEverything, tempDir } from "./helpers.js";

/** One batch the tree wrote: the values put in it, and whether it was fsynced. */
interface Commit {
  sync: boolean;
  values: string[];
}

type Db = ClassicLevel<string, string>;
type Chained = ReturnType<Db["batch"]>;

/** The real store, each chained batch's puts and write options noted on their way to LevelDB. */
function spied(db: Db, commits: Commit[]): Db {
  const batch = db.batch.bind(db) as () => Chained;
  const chained = (): Chained => {
    const b = batch();
    const values: string[] = [];
    const put = b.put.bind(b);
    const write = b.write.bind(b);
    b.put = (key: string, value: string) => {
      values.push(value);
      return put(key, value);
    };
    b.write = (options?: { sync?: boolean }) => {
      commits.push({ sync: options?.sync === true, values });
      return write(options ?? {});
    };
    return b;
  };
  // the tree only ever asks for a chained batch (level-tree.ts `write`)
  return Object.assign(db, { batch: chained });
}

async function open(location: string, sync: "always" | "never", commits: Commit[]): Promise<Tree> {
  const db = new ClassicLevel<string, string>(location, { keyEncoding: "utf8", valueEncoding: "utf8" });
  await db.open();
  return createLevelTree(spied(db, commits), { sync });
}

const holding = (c: Commit, text: string) => c.values.some((v) => v.includes(text));

describe("the intent record's fsync, by call class (sync always)", () => {
  const commits: Commit[] = [];
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let ws: Awaited<ReturnType<typeof tempDir>>;
  let tree: Tree;
  let runtime: Runtime;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end('{"ok":true}'));
  });

  beforeAll(async () => {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    dir = await tempDir("byteseek-intent-sync-");
    ws = await tempDir("byteseek-intent-sync-ws-");
    tree = await open(dir.path, "always", commits);
    const builtins = [...createTreeTools(), ...createEditTools(), ...createShellTools()];
    await seedTools({ tree, builtins });
    await grantEverything(tree, [`127.0.0.1:${port}`]);
    await declare(tree, {
      name: "count.add",
      description: "adds one",
      params: { type: "object", properties: {} },
      impl: { kind: "http", url: `http://127.0.0.1:${port}/add`, method: "POST" },
    });
    runtime = createRuntime({ tree, builtins, logger: pino({ level: "silent" }), workspace: ws.path });
  });
  afterAll(async () => {
    await runtime.close();
    await tree.close();
    await dir.remove();
    await ws.remove();
    server.close();
  });

  /** Calls `name` as run `vid`: the commits of its started record and of its result, in order. */
  async function commitsOf(name: string, args: Record<string, unknown>, vid: string) {
    const from = commits.length;
    const r = await runtime.call(name, args, { vid });
    expect(r.kind, r.text).toBe("ok");
    const during = commits.slice(from);
    const started = during.findIndex((c) => holding(c, '"state":"started"'));
    const done = during.findIndex((c) => holding(c, '"state":"done"'));
    expect(started).toBeGreaterThanOrEqual(0);
    expect(done).toBeGreaterThan(started);
    const record = await tree.get(r.record!);
    const sideEffect =
      record?.kind === "json" ? (record.value.value as { sideEffect?: string }).sideEffect : "";
    return { during, started, done, sideEffect };
  }

  it.each([
    ["a read tool", "tree.get", { key: "/nothing" }, "none"],
    ["an http call", "count.add", {}, "http"],
  ])(
    "commits the intent of %s (%s) without an fsync; the result's commit is fsynced",
    async (_what, name, args, kind) => {
      const { during, started, done, sideEffect } = await commitsOf(name, args, `lazy-${name}`);
      expect(sideEffect).toBe(kind);
      expect(during[started]?.sync).toBe(false);
      expect(during[done]?.sync).toBe(true);
    },
  );

  it("commits a tree write's intent in its effect's own fsynced commit: two commits a call, not three", async () => {
    const { during, started, done, sideEffect } = await commitsOf(
      "tree.set",
      { key: "/k2", value: "effect" },
      "carried-effect",
    );
    expect(sideEffect).toBe("tree");
    const effect = during.findIndex((c) => holding(c, '"effect"'));
    expect(effect).toBe(started);
    expect(during[effect]?.sync).toBe(true);
    expect(done).toBe(started + 1);
    expect(during).toHaveLength(2);
  });

  it.each([
    ["an edit", "edit.write", { path: "a.txt", text: "one\n" }, "files"],
    ["a command", "shell.run", { command: "true" }, "other"],
  ])("fsyncs the intent of %s (%s) before the call runs", async (_what, name, args, kind) => {
    const { during, started, sideEffect } = await commitsOf(name, args, `synced-${name}`);
    expect(sideEffect).toBe(kind);
    expect(during[started]?.sync).toBe(true);
  });
});

describe("deferSync in the tree's group commit", () => {
  it("fsyncs a group if any write in it needs it, and skips the fsync of a group that all deferred", async () => {
    const dir = await tempDir("byteseek-defer-sync-");
    const commits: Commit[] = [];
    const tree = await open(dir.path, "always", commits);
    try {
      await tree.set("/lazy", str("alone"), { deferSync: true });
      // queued in the same turn: one group, one batch
      await Promise.all([tree.set("/lazy", str("with"), { deferSync: true }), tree.set("/other", str("x"))]);
      await tree.append("/log/", str("appended"), { deferSync: true });
      expect(commits.map((c) => c.sync)).toEqual([false, true, false]);
      expect(holding(commits[1]!, "with") && holding(commits[1]!, '"x"')).toBe(true);
    } finally {
      await tree.close();
      await dir.remove();
    }
  });

  it("never fsyncs at sync never, asked or not", async () => {
    const dir = await tempDir("byteseek-defer-sync-never-");
    const commits: Commit[] = [];
    const tree = await open(dir.path, "never", commits);
    try {
      await tree.set("/a", str("1"));
      await tree.set("/a", str("2"), { deferSync: true });
      expect(commits.map((c) => c.sync)).toEqual([false, false]);
    } finally {
      await tree.close();
      await dir.remove();
    }
  });
});
