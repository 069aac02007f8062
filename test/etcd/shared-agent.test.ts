import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { json } from "../../tree/value.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

// Two byteseek instances (what two servers are) over one etcd: prompts, tools and records shared.
let etcd: EtcdCluster;
let workspace: string;
const trees: Tree[] = [];
let a: Byteseek;
let b: Byteseek;

beforeAll(async () => {
  etcd = await startEtcd();
  workspace = mkdtempSync(join(tmpdir(), "byteseek-shared-agent-"));
  const logger = pino({ level: "silent" });
  for (let i = 0; i < 2; i++)
    trees.push(await createEtcdTree({ endpoints: etcd.endpoints, prefix: "agents/" }));
  a = await createByteseek({ tree: trees[0]!, workspace, logger });
  b = await createByteseek({ tree: trees[1]!, workspace, logger });
}, 90_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  for (const t of trees) await t.close();
  await etcd?.remove();
  rmSync(workspace, { recursive: true, force: true });
});

const echo = {
  name: "demo.echo",
  description: "Echo the text back.",
  snippet: "echo a text back",
  params: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  impl: { kind: "shell", argv: ["echo", "{text}"] },
};

describe("two byteseek servers on one etcd", () => {
  it("offers a tool declared through A in B's next prompt, and B can call it", async () => {
    const before = await b.prompt("shared-run");
    expect(before.tools.map((t) => t.name)).not.toContain("demo.echo");
    await a.tree.set("/byteseek/tools/demo.echo", json(echo));
    const after = await b.prompt("shared-run");
    expect(after.tools.map((t) => t.name)).toContain("demo.echo");
    expect(after.system).toContain("- demo.echo: echo a text back");
    const result = await b.runtime.call("demo.echo", { text: "hi from B" }, { vid: "shared-run" });
    expect(result).toMatchObject({ kind: "ok", isError: false });
    expect(result.text).toContain("hi from B");
    // The record B made is visible to A.
    const record = await a.tree.get(result.record!);
    expect(record).toMatchObject({ kind: "json" });
  });

  it("drops a tool from A's next prompt once B deletes its declaration", async () => {
    expect((await a.prompt("shared-run")).tools.map((t) => t.name)).toContain("demo.echo");
    await b.tree.del("/byteseek/tools/demo.echo");
    expect((await a.prompt("shared-run")).tools.map((t) => t.name)).not.toContain("demo.echo");
  });
});
