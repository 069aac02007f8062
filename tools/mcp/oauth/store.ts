/**
 * Reads and writes the sign-in session of a registry entry (`oauth.session`), compare-and-set on the
 * entry's revision so a person's edit beside a token refresh is never lost; the session records the
 * configuration's revision (entry.ts) so its writes do not count as a change of the entry.
 */
import type { Tree } from "../../../tree/types.js";
import { type Json, json } from "../../../tree/value.js";
import { ToolError } from "../../errors.js";
import { MCP_DIR } from "../registry.js";
import { configHash, entryRevision, type OAuthConfig, type OAuthSession } from "./entry.js";

export interface OAuthEntryView {
  url: string;
  config: OAuthConfig;
  session: OAuthSession;
}

/** The server's URL, OAuth configuration and session; throws when it is no HTTP entry. */
export async function readOAuth(tree: Tree, server: string): Promise<OAuthEntryView> {
  const node = await tree.get(`${MCP_DIR}${server}`);
  const raw = node?.kind === "json" ? node.value.value : undefined;
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw new ToolError(
      "mcp_unavailable",
      `no MCP server "${server}" is registered (${MCP_DIR}${server} is absent); see kvspace mcp list`,
    );
  const entry = raw as Record<string, unknown>;
  if (typeof entry.url !== "string")
    throw new ToolError(
      "mcp_unavailable",
      `the MCP server "${server}" is a command, not a URL: only HTTP servers sign in`,
    );
  const config = (entry.oauth ?? {}) as OAuthConfig;
  return { url: entry.url, config, session: config.session ?? {} };
}

const ATTEMPTS = 8;

/**
 * Applies `change` to the entry's session and writes it (the entry's owner, read-only flag and every
 * other field kept). `change` answers the new session, or undefined to write nothing.
 */
export async function updateSession(
  tree: Tree,
  server: string,
  change: (session: OAuthSession) => OAuthSession | undefined,
): Promise<void> {
  const key = `${MCP_DIR}${server}`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const node = await tree.get(key);
    if (node?.kind !== "json" || typeof node.value.value !== "object" || node.value.value === null)
      throw new ToolError("mcp_unavailable", `no MCP server "${server}" is registered at ${key}`);
    const entry = node.value.value as Record<string, unknown>;
    const oauth = (entry.oauth ?? {}) as OAuthConfig;
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
      success: [{ op: "set", key, value: json(value as unknown as Json), force: true }],
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
