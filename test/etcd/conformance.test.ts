import type { Etcd3 } from "etcd3";
import { afterAll, beforeAll } from "vitest";
import { connectEtcd, createEtcdTree } from "../../tree/etcd/index.js";
import { describeTreeSuite } from "../tree/conformance.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

// One etcd for the whole suite; every test's tree lives under its own prefix.
let etcd: EtcdCluster;
let client: Etcd3;
let n = 0;

beforeAll(async () => {
  etcd = await startEtcd();
  client = connectEtcd({ endpoints: etcd.endpoints });
}, 60_000);

afterAll(async () => {
  client?.close();
  await etcd?.remove();
});

describeTreeSuite("etcd", async (options = {}) => {
  const tree = await createEtcdTree({ endpoints: etcd.endpoints, client, prefix: `t${++n}/`, ...options });
  return {
    tree,
    async dispose() {
      await tree.close().catch(() => {});
    },
  };
});
