/**
 * The pipe to a stdio upstream, on which its protocol era is asked. The MCP client probes a server
 * with `server/discover` before anything else: a server that answers it (byteseek's own `byteseek
 * mcp`, or any built on the SDK's `serveStdio`) is spoken to in 2026-07-28, one answering "method
 * not found" (-32601) — the SDK's `server.connect(new StdioServerTransport())`, the 2025 SDK —
 * gets the 2025 `initialize` next, on the same pipe. The SDK probes its base stdio transport on a
 * second, throwaway process instead (so a server that dies of the probe costs nothing); a stdio
 * upstream here runs in a sandbox whose start is not free, so this subclass has it probe in place,
 * and remembers whether the probe was the last thing sent: a server that exits then is started
 * again on 2025 (upstream.ts), the one case that takes a second process. A server that never
 * answers the probe gets `initialize` on the same pipe once the entry's probeTimeoutMs passes.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

export class SamePipeStdioTransport extends StdioClientTransport {
  /** The last message sent was the era probe: a close now is the server's answer to it. */
  probeLast = false;

  override send(message: JSONRPCMessage): Promise<void> {
    this.probeLast = "method" in message && message.method === "server/discover";
    return super.send(message);
  }
}
