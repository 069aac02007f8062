import type { PinnedConnection } from "./pinned-connection.js";

/**
 * How long a kept connection waits for its next call before it is closed: well under the idle
 * timeouts servers close keep-alive connections after (2 s and more), so a request rarely meets a
 * connection the server is closing.
 */
const IDLE_MS = 1_000;
/** The most connections kept at once; beyond, an answered call's connection is closed. */
const MAX_KEPT = 64;

/**
 * The connections `http` tool calls leave open for the next call of the same tool in the same run
 * (tools/impl/http.ts), one per key, for a short idle time: a call that finds one skips its connect.
 * The key is the caller's: it names the run, the declaration, the origin and the address the host
 * rules checked, so a connection is only ever reused by a call that checked the same address under
 * its own run's policy (a new DNS answer, another run, another tool: a new connection). A call has
 * its connection alone: taken out while it runs, kept again only once its answer was read whole.
 */
export interface KeptConnections {
  /** The connection kept for `key`, now the caller's alone; undefined: none. */
  take(key: string): PinnedConnection | undefined;
  /** Keeps an idle connection for the next call of `key` (or closes it: one is kept already, or too many). */
  keep(key: string, connection: PinnedConnection): Promise<void>;
  /** Closes every kept connection; later ones are closed at once. */
  close(): Promise<void>;
}

export function createKeptConnections(options: { idleMs?: number; max?: number } = {}): KeptConnections {
  const { idleMs = IDLE_MS, max = MAX_KEPT } = options;
  const idle = new Map<string, { connection: PinnedConnection; timer: NodeJS.Timeout }>();
  let closed = false;
  return {
    take(key) {
      const kept = idle.get(key);
      if (kept === undefined) return undefined;
      idle.delete(key);
      clearTimeout(kept.timer);
      return kept.connection;
    },
    async keep(key, connection) {
      if (closed || idle.has(key) || idle.size >= max) return connection.close();
      const timer = setTimeout(function closeIdle() {
        if (idle.get(key)?.connection === connection) idle.delete(key);
        void connection.close();
      }, idleMs);
      // an idle connection never keeps the process alive
      timer.unref();
      idle.set(key, { connection, timer });
    },
    async close() {
      closed = true;
      const all = [...idle.values()];
      idle.clear();
      for (const kept of all) clearTimeout(kept.timer);
      await Promise.all(all.map((kept) => kept.connection.close()));
    },
  };
}
