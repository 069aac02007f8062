import type { Etcd3 } from "etcd3";
import { createEtcdTree } from "../../tree/etcd/index.js";
import { describeTreeSuite } from "../tree/conformance.js";
import type { EtcdCluster } from "./etcd-process.js";
import { useEtcdClient } from "./fixtures.js";

// One etcd for the whole suite; every test's tree lives under its own prefix.
let etcd: EtcdCluster;
let client: Etcd3;
let n = 0;

useEtcdClient((e, c) => ([etcd, client] = [e, c]));

describeTreeSuite("etcd", async (options = {}) => {
  const tree = await createEtcdTree({ endpoints: etcd.endpoints, client, prefix: `t${++n}/`, ...options });
  return {
    tree,
    async dispose() {
      await tree.close().catch(() => {});
    },
  };
});
