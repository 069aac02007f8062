export { connectEtcd, type EtcdClientOptions } from "./client.js";
export { createEtcdTree, type EtcdTreeOptions } from "./etcd-tree.js";
export type { EtcdTls } from "./h2.js";
export type { EtcdRecord } from "./layout.js";
export { type EtcdTlsFiles, readEtcdTls } from "./tls.js";
