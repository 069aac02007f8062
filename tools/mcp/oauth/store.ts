/**
 * Reads and writes the sign-in session of a registry entry (`oauth.session`), compare-and-set on the
 * entry's revision so a person's edit beside a token refresh is never lost; the session records the
 * configuration's revision (entry.ts) so its writes do not count as a change of the entry.
 */

import { keys } from "../../../shared/keys.js";
import type { Tree } from "../../../tree/types.js";
import { docs } from "../../doc/docs.js";
import { docValue, parseDocAsStored, readDoc } from "../../doc/read-write.js";
import { ToolError } from "../../errors.js";
import { configHash, entryRevision, type OAuthConfig, type OAuthSession } from "./entry.js";

export interface OAuthEntryView {
  url: string;
  config: OAuthConfig;
  session: OAuthSession;
}

/**
 * The server's URL, OAuth configuration and session; throws when it is no HTTP entry, and
 * `DOC_MALFORMED` when its `oauth` is not one.
 */
export async function readOAuth(tree: Tree, server: string): Promise<OAuthEntryView> {
  const key = keys.mcpServer(server);
  const entry = await readDoc(tree, docs.mcpSignIn, key);
  if (!entry)
    throw new ToolError(
      "mcp_unavailable",
      `no MCP server "${server}" is registered (${key} is absent); see kvspace mcp list`,
    );
  if (entry.url === undefined)
    throw new ToolError(
      "mcp_unavailable",
      `the MCP server "${server}" is a command, not a URL: only HTTP servers sign in`,
    );
  const config = entry.oauth ?? {};
  return { url: entry.url, config, session: config.session ?? {} };
}

const ATTEMPTS = 8;

/**
 * Applies `change` to the entry's session and writes it (the entry's owner, read-only flag and every
 * other field kept, as stored). `change` answers the new session, or undefined to write nothing.
 */
export async function updateSession(
  tree: Tree,
  server: string,
  change: (session: OAuthSession) => OAuthSession | undefined,
): Promise<void> {
  const key = keys.mcpServer(server);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const node = await tree.get(key);
    const entry = parseDocAsStored(docs.mcpSignIn, key, node);
    if (!node || !entry)
      throw new ToolError("mcp_unavailable", `no MCP server "${server}" is registered at ${key}`);
    const oauth = entry.oauth ?? {};
    const next = change({ ...(oauth.session ?? {}) });
    if (next === undefined) return;
    const session: OAuthSession = {
      ...dropUndefined(next),
      configRev: entryRevision(node),
      configHash: configHash(entry),
    };
    const value = { ...entry, oauth: { ...oauth, session } };
    const res = await tree.txn({
      compare: [{ key, target: "modRev", value: node.modRev }],
      success: [{ op: "set", key, value: docValue(docs.mcpSignIn, value), force: true }],
    });
    if (res.succeeded) return;
  }
  throw new ToolError(
    "mcp_unavailable",
    `the entry ${key} kept changing while byteseek saved its sign-in; try again`,
  );
}

function dropUndefined(s: OAuthSession): OAuthSession {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as OAuthSession;
}
