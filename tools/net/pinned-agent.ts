import type { LookupFunction } from "node:net";
import type { Agent } from "undici";

/**
 * An undici dispatcher whose every connection goes to `address`, the one the host rules checked:
 * the URL keeps its name (Host header, TLS server name and certificate check), but the name is
 * never looked up again, so a second DNS answer cannot send the request elsewhere. One per request
 * (an `http` tool's) or per connection (an MCP upstream's, with a few connections: its event
 * stream and its requests at once). undici is loaded here, at the first such request: a process
 * that makes none starts without it.
 */
export async function pinnedAgent(
  address: string,
  family: 4 | 6,
  options: { connections?: number } = {},
): Promise<Agent> {
  const { Agent } = await import("undici");
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return new Agent({ connect: { lookup }, connections: options.connections ?? 1 });
}
