import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTree } from "../../tree/index.js";
import type { ExportEntry, HistoryEntry, Tree } from "../../tree/types.js";
import { json, str } from "../../tree/value.js";
import { cliEnv, tempDirs } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { sampleValues } from "../tree/suite/values.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

let etcd: EtcdCluster;
const temps = tempDirs("kvspace-migrate-");
// the stores hold exactly what the test wrote: a CLI that seeded them would add its own /byteseek/
const NO_SEED = { BYTESEEK_SEED: "0" };
let n = 0;

beforeAll(async () => {
  etcd = await startEtcd();
}, 60_000);

afterAll(async () => {
  await temps.removeAll();
  await etcd?.remove();
});

interface Store {
  kvspace: string;
  open(): Promise<Tree>;
}

async function folderStore(): Promise<Store> {
  const location = join(await temps.make(), "data");
  return { kvspace: location, open: () => openTree({ backend: "classic", location }) };
}

function etcdStore(): Store {
  const prefix = `migrate${++n}/`;
  return {
    kvspace: `etcd://${etcd.endpoints[0]}/${prefix}`,
    open: () => openTree({ backend: "etcd", endpoints: etcd.endpoints, prefix }),
  };
}

/** Every kind of value, ro and vid flags, an empty directory, a system entry, and history with a delete in it. */
async function fill(tree: Tree): Promise<void> {
  let i = 0;
  for (const v of Object.values(sampleValues)) await tree.set(`/data/${i++}`, v);
  await tree.set("/byteseek/prompt/system", str("one"));
  await tree.set("/byteseek/prompt/system", json({ two: 2 }), { vid: "run-1" });
  await tree.set("/byteseek/prompt/system", str("three"), { ro: true });
  await tree.set("/byteseek/memory/gone", str("first"));
  await tree.del("/byteseek/memory/gone");
  await tree.set("/byteseek/memory/gone", str("again"));
  await tree.set("/byteseek/‥pc", str("system entry"));
  await tree.mkindex("/empty/dir/");
}

/** What a store holds, as the tree answers it: every export line, and the history of every value. */
async function contents(
  tree: Tree,
): Promise<{ lines: ExportEntry[]; history: Record<string, HistoryEntry[]> }> {
  const lines: ExportEntry[] = [];
  for await (const e of tree.export()) lines.push(e);
  const history: Record<string, HistoryEntry[]> = {};
  for (const e of lines)
    if (e.kind !== "index") history[e.key] = (await tree.history(e.key)).map((h) => ({ ...h, modRev: 0 }));
  return { lines: lines.sort((a, b) => (a.key < b.key ? -1 : 1)), history };
}

describe("kvspace export and import between stores", () => {
  it.each([
    ["a LevelDB folder", "etcd", folderStore, async () => etcdStore()],
    ["etcd", "a LevelDB folder", async () => etcdStore(), folderStore],
  ])(
    "moves everything from %s to %s: values, kinds, ro, vid, versions and history",
    async (_a, _b, from, to) => {
      const source = await from();
      const target = await to();
      const cwd = await temps.make();
      const tree = await source.open();
      let before: Awaited<ReturnType<typeof contents>>;
      try {
        await fill(tree);
        before = await contents(tree);
      } finally {
        await tree.close();
      }
      const exported = await runInProcess(["export"], { env: cliEnv(source.kvspace, NO_SEED), cwd });
      expect(exported).toMatchObject({ code: 0, stderr: "" });
      const imported = await runInProcess(["import", "--force", "-"], {
        env: cliEnv(target.kvspace, NO_SEED),
        cwd,
        stdin: exported.stdout,
      });
      expect(imported).toMatchObject({ code: 0, stderr: "" });
      expect(imported.stdout).toMatch(new RegExp(`^imported\\t${before.lines.length}\\t`));
      const moved = await target.open();
      try {
        const after = await contents(moved);
        expect(after).toEqual(before);
        expect(after.history["/byteseek/prompt/system"]?.map((h) => h.version)).toEqual([2, 1]);
        expect(after.history["/byteseek/memory/gone"]?.[0]).toMatchObject({
          value: str("first"),
          deleted: true,
        });
        expect(await moved.get("/byteseek/prompt/system")).toMatchObject({
          version: 3,
          ro: true,
          value: str("three"),
        });
      } finally {
        await moved.close();
      }
    },
  );
});
