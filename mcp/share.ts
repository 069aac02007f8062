/**
 * One store folder, many MCP sessions: the MCP half of a held folder's socket. LevelDB lets one
 * process hold a folder, and a host starts a stdio server per session, so a second session on the
 * same project would find the folder locked. The holder listens on the folder's socket (the store
 * layer's: tree/held-socket.ts says where and how a second process is let in, tree/held-listen.ts
 * serves it), and a `byteseek mcp` that finds the folder locked relays its client's stdio there
 * (cli/mcp-relay.ts). Here each relayed connection is served as a stdio connection of the holder's
 * own — the SDK's stdio entry over the socket — through its one runtime, group commit and watch.
 *
 * What a relay may ask: calls run in the holder's workspace, whatever the relay was started for;
 * the holder names its workspace in its answer, and a relay started for another says so on stderr
 * (one store, one workspace). Its run id is the holder's to give, never the relay's to name: a
 * relayed session cannot act, or approve its own calls, as another run.
 */
import type { Socket } from "node:net";
import type { Logger } from "pino";
import {
  type HeldSocket,
  type HeldSocketOptions,
  listenHeld,
  type RelayHandle,
} from "../tree/held-listen.js";
import type { LiveTree } from "./live.js";
import { notifyInstances } from "./notify.js";
import type { McpFactory, McpInstance } from "./server.js";
import { serveConnection } from "./stdio.js";

export type SharedMcp = HeldSocket;

/** What serves relayed MCP sessions: the factory they are made by and the tree's change feed. */
export interface RelayOptions {
  factory: McpFactory;
  live: LiveTree;
  logger: Logger;
  /** Plain 2026-era calls answered beside the SDK (mcp/stdio.ts; default: BYTESEEK_FAST, on). */
  plainCalls?: boolean;
}

/** The held socket's options (tree/held-listen.ts), less its relay server: this module's. */
export interface ShareOptions extends Omit<HeldSocketOptions, "relay">, RelayOptions {}

/** Relayed MCP sessions: `relay` serves one let-in connection; `close` stops telling them of the tree's changes. */
export interface Relays {
  relay(connection: Socket): RelayHandle;
  close(): void;
}

/**
 * Serves each relayed connection as a stdio connection of `factory`'s, told of the tree's changes
 * (the held socket's `relay`; cli/hold-share.ts makes these at a run's first relay).
 */
export function createRelays({ factory, live, logger, plainCalls }: RelayOptions): Relays {
  const instances = new Set<McpInstance>();
  const unsubscribe = live.subscribe((change) => notifyInstances(instances, change));
  return {
    relay: (connection) =>
      serveConnection({
        factory,
        logger,
        input: connection,
        output: connection,
        onInstance(instance) {
          instances.add(instance);
          connection.once("close", () => instances.delete(instance));
        },
        // the holder names the session's run at its initialize (mcp-<client>-<n>), never the relay
        transport: "relay",
        ...(plainCalls === undefined ? {} : { plainCalls }),
      }),
    close: unsubscribe,
  };
}

/**
 * Serves the folder's socket with relayed MCP sessions (each a stdio connection of this process's
 * factory, told of the tree's changes); call only while holding the store. A socket that cannot be
 * made is a warning (listenHeld).
 */
export async function listenShared(options: ShareOptions): Promise<SharedMcp | undefined> {
  const { factory, live, logger, plainCalls, ...held } = options;
  const relays = createRelays({ factory, live, logger, ...(plainCalls === undefined ? {} : { plainCalls }) });
  const socket = await listenHeld({ ...held, logger, relay: relays.relay });
  if (socket === undefined) {
    relays.close();
    return undefined;
  }
  return {
    ...socket,
    async close() {
      relays.close();
      await socket.close();
    },
  };
}
