import type { LookupFunction } from "node:net";
import { Agent } from "undici";

/** A resolver that answers `address` for every name: the one the host rules checked. */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * An undici dispatcher whose every connection goes to `address`, the one the host rules checked:
 * the URL keeps its name (Host header, TLS server name and certificate check), but the name is
 * never looked up again, so a second DNS answer cannot send the request elsewhere. One per
 * connection set of an MCP upstream (a few connections: its event stream and its requests at once);
 * an `http` tool's call opens its own (pinned-connection.ts).
 */
export function pinnedAgent(address: string, family: 4 | 6, options: { connections?: number } = {}): Agent {
  return new Agent({
    connect: { lookup: pinnedLookup(address, family) },
    connections: options.connections ?? 1,
  });
}
