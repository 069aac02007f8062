/**
 * What byteseek answers when an upstream asks it something. Roots: the workspace, the one folder
 * byteseek's tools may touch (a connection serves every run, and every run shares that root).
 * Elicitation and sampling are not declared, so an upstream does not ask for them.
 */
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/client";

export function answerUpstreamRequests(client: Client, workspace: string): void {
  client.registerCapabilities({ roots: {} });
  client.setRequestHandler("roots/list", async () => ({
    roots: [{ uri: pathToFileURL(workspace).href, name: "workspace" }],
  }));
}
