/**
 * The `oauth` field of an HTTP registry entry (`/byteseek/mcp/<server>`): what a person sets (a
 * client registered beforehand, a client ID metadata document, the scopes) and, under `session`,
 * what byteseek keeps of the sign-in (the registered client, the tokens, the PKCE verifier and
 * state of a sign-in under way). The whole field is a secret field (secret-fields.ts): a person
 * reads it, runs and exports see it masked.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { docFamily } from "../../doc/read-write.js";

/** What byteseek writes of one server's sign-in. Loose by design: the SDK's documents are kept whole. */
export const OAuthSession = z
  .object({
    /** The client as registered with the authorization server (dynamic registration or the document). */
    client: z.record(z.string(), z.unknown()).optional(),
    /** The tokens of the last sign-in or refresh, as the authorization server answered (plus `issuer`). */
    tokens: z.record(z.string(), z.unknown()).optional(),
    /** The server URL the tokens were given for: they are never sent to another (the entry's url changed). */
    url: z.string().optional(),
    /** When the access token expires (ms since the epoch), from `expires_in` when it was saved. */
    expiresAt: z.number().optional(),
    /** A sign-in under way: its PKCE verifier, state, redirect URI and when it began. */
    verifier: z.string().optional(),
    state: z.string().optional(),
    redirectUri: z.string().optional(),
    startedAt: z.number().optional(),
    /** Where discovery found the authorization server (the SDK's discovery state). */
    discovery: z.record(z.string(), z.unknown()).optional(),
    /** Scopes the server asked for that the tokens lack (a 403 insufficient_scope): the next sign-in asks for them. */
    needScope: z.string().optional(),
    /** Why the last use of the sign-in failed: a person must sign in again. */
    error: z.string().optional(),
    /**
     * The entry's revision for everything but this session, and a hash of that configuration: a
     * write of the session alone changes neither, so it neither restarts the connection nor counts
     * as a new registration (entryRevision).
     */
    configRev: z.number().optional(),
    configHash: z.string().optional(),
  })
  .strict();
export type OAuthSession = z.infer<typeof OAuthSession>;

export const OAuthConfig = z
  .object({
    clientId: z
      .string()
      .min(1)
      .optional()
      .describe("A client id registered beforehand with the server's authorization server"),
    clientSecret: z.string().min(1).optional().describe("Its secret, for a confidential client"),
    clientMetadataUrl: z
      .url({ protocol: /^https$/ })
      .optional()
      .describe("The https URL of byteseek's client ID metadata document, where the server accepts one"),
    scope: z
      .string()
      .optional()
      .describe("Scopes to ask for (default: those the server's challenge or metadata names)"),
    session: OAuthSession.optional().describe("Written by byteseek: the sign-in (kvspace mcp login)"),
  })
  .strict();
export type OAuthConfig = z.infer<typeof OAuthConfig>;

/**
 * A registry entry as the sign-in reads and writes it: its `url` (absent: a command, which does
 * not sign in) and its `oauth`, every other field as the entry has it. The sign-in writes the
 * entry back as stored with only `oauth.session` replaced, so the schema only checks (nothing is
 * added, dropped or reordered).
 */
export const SignInEntry = z.object({ url: z.string().optional(), oauth: OAuthConfig.optional() }).loose();
export const SignInEntryDoc = docFamily("an MCP server registry entry", SignInEntry);

/** The entry without its byteseek-written session, as a stable string (keys sorted). */
export function configHash(entry: Record<string, unknown>): string {
  const oauth = entry.oauth as Record<string, unknown> | undefined;
  const rest: Record<string, unknown> = { ...entry };
  if (oauth && typeof oauth === "object") {
    const { session: _session, ...config } = oauth;
    rest.oauth = config;
  }
  return createHash("sha256").update(stableJson(rest)).digest("hex").slice(0, 32);
}

/**
 * The revision a registry entry's configuration was last written at: its modRev, unless only
 * byteseek's sign-in session changed since (then the revision the session recorded). The pool
 * restarts a connection, and the pins take a sync as a fresh registration, only when this changes.
 */
export function entryRevision(node: { modRev: number; value?: unknown } | undefined): number {
  if (!node) return 0;
  const raw = (node.value as { value?: unknown } | undefined)?.value;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return node.modRev;
  const session = ((raw as Record<string, unknown>).oauth as { session?: OAuthSession } | undefined)?.session;
  if (session?.configRev === undefined || session.configHash === undefined) return node.modRev;
  return session.configHash === configHash(raw as Record<string, unknown>) ? session.configRev : node.modRev;
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}
