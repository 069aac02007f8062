export { connectEtcd, type EtcdClientOptions } from "./client.js";
export { createEtcdTree, type EtcdTreeOptions } from "./etcd-tree.js";
export type { EtcdRecord } from "./layout.js";
