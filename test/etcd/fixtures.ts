/**
 * The etcd a test file shares across its tests: started before them, removed after them, with what
 * was opened on it. Each hands what it made to `take`, so the file keeps it in variables of its own
 * (`useEtcdClient((e, c) => ([etcd, client] = [e, c]))`) and its tests read as before.
 */
import type { Etcd3 } from "etcd3";
import { afterAll, beforeAll } from "vitest";
import { connectEtcd, createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

/** One etcd and one etcd3 client on it (every test's tree lives under its own prefix). */
export function useEtcdClient(take: (etcd: EtcdCluster, client: Etcd3) => void): void {
  let etcd: EtcdCluster | undefined;
  let client: Etcd3 | undefined;
  beforeAll(async () => {
    etcd = await startEtcd();
    client = connectEtcd({ endpoints: etcd.endpoints });
    take(etcd, client);
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await etcd?.remove();
  });
}

/** One etcd and two trees on one prefix, each with its own client: what two byteseek servers are. */
export function useTwoTrees(prefix: string, take: (etcd: EtcdCluster, a: Tree, b: Tree) => void): void {
  let etcd: EtcdCluster | undefined;
  let a: Tree | undefined;
  let b: Tree | undefined;
  beforeAll(async () => {
    etcd = await startEtcd();
    a = await createEtcdTree({ endpoints: etcd.endpoints, prefix });
    b = await createEtcdTree({ endpoints: etcd.endpoints, prefix });
    take(etcd, a, b);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await etcd?.remove();
  });
}
