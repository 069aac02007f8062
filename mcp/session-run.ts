/**
 * Each MCP host session is a run of its own, `mcp-<client>-<n>`: the client's name from its
 * `initialize` (`clientInfo.name`, made a valid run id) and the n-th session of that client in this
 * store, counted in the tree (an append under `/vthread/‥mcp/<mcp-client>/`, so processes sharing the
 * store never hand out one id twice). So a "for this run" approval given in one session does not
 * carry over to the next, and each session's calls are recorded apart. The run's
 * `/vthread/<vid>/client` says which client it was (name, version, transport), for the runs listing.
 *
 * A session's run is made at its first request that needs one, once: a connection (stdio, a relay),
 * or a 2025-era HTTP session. Calls without a session (2026-era HTTP, stateless) stay `mcp-<client>`.
 */

import { randomBytes } from "node:crypto";
import { dirs, keys } from "../shared/keys.js";
import type { Tree } from "../tree/types.js";
import { json } from "../tree/value.js";

/** Where the sessions of each client are counted. */
export const SESSIONS_DIR = dirs.mcpSessions;

/** `mcp-<client name>`, made a valid run id (room left for `-<n>`). */
export function clientVid(clientName: string | undefined): string {
  const name = (clientName ?? "").replace(/[^A-Za-z0-9_.:@-]+/g, "-").slice(0, 100);
  return `mcp-${name || "client"}`;
}

/** The run of one session, made on first use. */
export interface SessionRun {
  vid(client: { name?: string; version?: string } | undefined): Promise<string>;
}

export type Transport = "stdio" | "relay" | "http";

/** A session's run maker: `mcp-<client>-<n>`, n counted in `tree` per client. */
export function sessionRun(tree: Tree, transport: Transport): SessionRun {
  let made: Promise<string> | undefined;
  return {
    vid(client) {
      made ??= allocate(tree, transport, client);
      return made;
    },
  };
}

async function allocate(
  tree: Tree,
  transport: Transport,
  client: { name?: string; version?: string } | undefined,
): Promise<string> {
  const base = clientVid(client?.name);
  const ts = Date.now();
  let vid: string;
  try {
    const { key } = await tree.append(`${SESSIONS_DIR}${base}/`, json({ transport, ts }));
    vid = `${base}-${Number(key.slice(key.lastIndexOf("/") + 1)) + 1}`;
  } catch {
    // a tree that takes no write (it still serves reads): an id no other session has
    return `${base}-${randomBytes(4).toString("hex")}`;
  }
  await tree
    .set(
      keys.runClient(vid),
      json({ name: client?.name ?? null, version: client?.version ?? null, transport, ts }),
      { vid },
    )
    .catch(() => {});
  return vid;
}
