/** `byteseek mcp` on etcd: the catalogue follows a declaration another process writes to the shared tree. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { json } from "../../tree/value.js";
import { CONFIRMED_TOOL, connectV1Stdio } from "../mcp/helpers.js";
import { eventually, tempDir } from "../server/helpers.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

let etcd: EtcdCluster;
let other: Tree;
let ws: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  etcd = await startEtcd();
  other = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "mcp/" });
  ws = await tempDir("byteseek-mcp-etcd-ws-");
}, 60_000);

afterAll(async () => {
  await other?.close();
  await etcd?.remove();
  await ws?.remove();
});

describe("byteseek mcp on KVSPACE=etcd://", () => {
  it("serves the shared tree's tools, records calls in it, and follows a declaration another process writes", async () => {
    let changed = 0;
    const client = await connectV1Stdio(
      { KVSPACE: `etcd://${etcd.endpoints.join(",")}/mcp`, BYTESEEK_WORKSPACE: ws.path },
      { onToolsChanged: () => changed++ },
      ["--vid", "on-etcd"],
    );
    try {
      const ok = await client.callTool({ name: "tree_get", arguments: { key: "/byteseek/prompt/system" } });
      expect(ok.isError).toBe(false);
      const rec = await other.get("/byteseek/tool/on-etcd/0");
      expect(rec?.kind === "json" && (rec.value.value as { name: string }).name).toBe("tree.get");
      await other.set(
        "/byteseek/tools/text.shared",
        json({ ...CONFIRMED_TOOL, name: "text.shared", confirm: false }),
      );
      await eventually(() => changed > 0, "notifications/tools/list_changed from another process's write");
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("text_shared");
    } finally {
      await client.close();
    }
  });
});
