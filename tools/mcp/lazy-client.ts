/**
 * byteseek's MCP client, made at its first use. The client and what it reaches upstream with (the
 * MCP SDK, undici, the OAuth flows: about a quarter of a `byteseek run`'s start in CPU) are loaded
 * only when something asks for an MCP server — a server's start syncing the registry, a call of a
 * synced tool, a `kvspace mcp` command; a run, chat or worker with none registered never loads them
 * (test/agent/lazy-imports.test.ts). Every method is the client's own (client.ts), once it is made.
 */
import type { McpClient, McpClientOptions } from "./client.js";

export function createLazyMcpClient(options: McpClientOptions): McpClient {
  let made: Promise<McpClient> | undefined;
  const client = (): Promise<McpClient> =>
    (made ??= import("./client.js").then(({ createMcpClient }) => createMcpClient(options)));
  return {
    sync: async (server, reason) => (await client()).sync(server, reason),
    start: async () => (await client()).start(),
    list: async () => (await client()).list(),
    call: async (impl, args, ctx) => (await client()).call(impl, args, ctx),
    needs: async (server) => (await client()).needs(server),
    held: async (server) => (await client()).held(server),
    allowed: async (server, tool) => (await client()).allowed(server, tool),
    review: async (server) => (await client()).review(server),
    accept: async (server, accepted) => (await client()).accept(server, accepted),
    signIn: async (server, redirectUri) => (await client()).signIn(server, redirectUri),
    signInDevice: async (server) => (await client()).signInDevice(server),
    finishSignIn: async (redirected) => (await client()).finishSignIn(redirected),
    signOut: async (server) => (await client()).signOut(server),
    // one never made has nothing to stop
    async close() {
      await (await made)?.close();
    },
  };
}
