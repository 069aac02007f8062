/** The etcd process helpers live in bench/ (compiled by the build, which leaves test/ out). */
export {
  ETCD_TREE_FLAGS,
  type EtcdCluster,
  type EtcdMember,
  type EtcdMemberOptions,
  freePort,
  startEtcd,
  startEtcdCluster,
} from "../../bench/etcd-process.js";
