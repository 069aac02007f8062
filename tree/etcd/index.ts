export { connectEtcd, type EtcdClientOptions } from "./client.js";
export { createEtcdTree, type EtcdTreeOptions } from "./etcd-tree.js";
export { type EtcdRecord, LOG_SK, type LogRecord } from "./layout.js";
