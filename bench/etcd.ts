/**
 * etcd backend figures (issue 8): set/get/append/list per second with 1 and 32 callers on the
 * etcd tree, beside the classic-level tree and beside raw etcd puts and gets through the same
 * client (the ceiling: one tree write is one etcd read and one etcd transaction). etcd is started
 * by the script (Debian's `etcd-server`) on a loopback port with a data dir on disk, and removed.
 *
 *   npm run build && node dist/bench/etcd.js [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectEtcd, createEtcdTree } from "../tree/etcd/index.js";
import { openTree, str } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import { startEtcd } from "./etcd-process.js";
import { fmt, perSecond, printTable, ratio } from "./report.js";

const quick = process.argv.includes("--quick");
const OPS = quick ? 500 : 3000;
const VALUE = "v".repeat(200);

async function treeFigures(tree: Tree): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const v = str(VALUE);
  for (const callers of [1, 32]) {
    const base = `/bench/c${callers}/`;
    out[`set x${callers}`] = await perSecond(OPS, callers, (i) => tree.set(base + i, v));
    out[`get x${callers}`] = await perSecond(OPS, callers, (i) => tree.get(base + i));
    out[`append x${callers}`] = await perSecond(OPS / 2, callers, () =>
      tree.append(`/bench/a${callers}/`, v),
    );
    out[`list 10 x${callers}`] = await perSecond(OPS, callers, (i) =>
      tree.list(base, { limit: 10, after: String(i % (OPS - 10)) }),
    );
  }
  return out;
}

async function main(): Promise<void> {
  const etcd = await startEtcd({ root: tmpdir() });
  const dir = mkdtempSync(join(tmpdir(), "byteseek-bench-etcd-"));
  try {
    const client = connectEtcd({ endpoints: etcd.endpoints });
    const raw: Record<string, number> = {};
    for (const callers of [1, 32]) {
      raw[`set x${callers}`] = await perSecond(OPS, callers, (i) =>
        client.kv.put({ key: Buffer.from(`raw/c${callers}/${i}`), value: Buffer.from(VALUE) }),
      );
      raw[`get x${callers}`] = await perSecond(OPS, callers, (i) =>
        client.kv.range({ key: Buffer.from(`raw/c${callers}/${i}`) }),
      );
    }
    client.close();

    const onEtcd = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "bench/" });
    const etcdFigures = await treeFigures(onEtcd);
    await onEtcd.close();
    const classic = await openTree({ backend: "classic", location: join(dir, "classic") });
    const classicFigures = await treeFigures(classic);
    await classic.close();

    console.log(`ops/s, ${OPS} ops per row (appends: ${OPS / 2}), 200-byte values, etcd data dir on disk`);
    printTable(
      [
        "operation",
        "classic-level tree",
        "etcd tree",
        "raw etcd",
        "etcd tree / classic",
        "etcd tree / raw etcd",
      ],
      Object.keys(etcdFigures).map((k) => [
        k,
        fmt(classicFigures[k] ?? 0),
        fmt(etcdFigures[k] ?? 0),
        raw[k] === undefined ? "" : fmt(raw[k]),
        ratio(etcdFigures[k] ?? 0, classicFigures[k] ?? 0).toFixed(3),
        raw[k] === undefined ? "" : ratio(etcdFigures[k] ?? 0, raw[k]).toFixed(2),
      ]),
    );
    console.log("HTTP figures against the etcd backend: bench/http.ts does not exist yet.");
  } finally {
    await etcd.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
