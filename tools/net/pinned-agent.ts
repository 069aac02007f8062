import type { LookupFunction } from "node:net";
import { Agent } from "undici";

/**
 * An undici dispatcher whose every connection goes to `address`, the one the host rules checked:
 * the URL keeps its name (Host header, TLS server name and certificate check), but the name is
 * never looked up again, so a second DNS answer cannot send the request elsewhere. One per request
 * (an `http` tool's) or per connection (an MCP upstream's, with a few connections: its event
 * stream and its requests at once).
 */
export function pinnedAgent(address: string, family: 4 | 6, options: { connections?: number } = {}): Agent {
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return new Agent({ connect: { lookup }, connections: options.connections ?? 1 });
}
