/**
 * Brings a tree written by an older byteseek (format 1: a change-log key `<prefix>L` rewritten by
 * every write) to the current layout when it opens. Nodes and history are laid out the same, so
 * they are read as they are; the upgrade deletes the log key and creates `<prefix>F`, whose
 * create_revision is the first revision a watch can replay: events of older revisions were in the
 * log, not in the node records, so a watch from before it is answered TREE_COMPACTED (re-list,
 * then watch), as after a compaction. One transaction, guarded, so servers opening the same tree
 * at once upgrade it once. Servers of the older version must be stopped first: one that writes
 * afterwards recreates the log key, which the next open removes again.
 */
import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import { headerRev, kvNum } from "./client.js";
import { FORMAT_SK, OLD_LOG_SK } from "./layout.js";

/** Upgrades the tree under `prefix` if it is in format 1; answers the first watchable revision (0: all). */
export async function upgradeEtcdLayout(client: Etcd3, prefix: string, logger?: Logger): Promise<number> {
  const log = Buffer.from(prefix + OLD_LOG_SK, "utf8");
  const format = Buffer.from(prefix + FORMAT_SK, "utf8");
  for (;;) {
    const res = await client.kv.txn({
      success: [
        { request_range: { key: log, keys_only: true } },
        { request_range: { key: format, keys_only: true } },
      ],
    });
    const logKv = res.responses[0]?.response_range?.kvs[0];
    const formatKv = res.responses[1]?.response_range?.kvs[0];
    if (!logKv) return formatKv ? kvNum(formatKv, "create_revision") : 0;
    const upgrade = await client.kv.txn({
      compare: [
        { key: log, target: "Mod", result: "Equal", mod_revision: String(kvNum(logKv, "mod_revision")) },
        formatKv
          ? {
              key: format,
              target: "Mod",
              result: "Equal",
              mod_revision: String(kvNum(formatKv, "mod_revision")),
            }
          : { key: format, target: "Version", result: "Equal", version: "0" },
      ],
      success: [
        { request_delete_range: { key: log } },
        ...(formatKv ? [] : [{ request_put: { key: format, value: Buffer.from('{"fmt":2}', "utf8") } }]),
      ],
    });
    if (upgrade.succeeded) {
      const rev = formatKv ? kvNum(formatKv, "create_revision") : headerRev(upgrade.header);
      logger?.info(
        { prefix, rev },
        "etcd tree upgraded: the change-log key is gone; watches resume from here",
      );
      return rev;
    }
  }
}
