import { z } from "zod";
import { dirs, keys } from "../../shared/keys.js";
import { maskSecrets, SECRET_FIELDS, SECRET_MASK } from "./secret-fields.js";

export { maskSecrets, SECRET_FIELDS, SECRET_MASK };

import { zodProblems } from "../catalogue/declaration.js";
import { OAuthConfig } from "./oauth/entry.js";

/** Where upstream MCP servers are registered: `/byteseek/mcp/<server>` (json). */
export const MCP_DIR = dirs.mcpServers;

/**
 * What byteseek keeps of each server's last sync, one json value per server beside the registry:
 * its state and the upstream copy of every synced declaration, the base
 * a re-sync compares a person's local changes against.
 */
export const syncKey = keys.mcpSync;
export const SYNC_DIR = dirs.mcpSync;

/** A server's name: a tool family (lowercase, as `<family>` in `family.verb`). */
export const ServerName = z
  .string()
  .max(32)
  .regex(/^[a-z][a-z0-9_-]*$/, "a server name is a tool family: lowercase letters, digits, _ and -");

const Common = {
  enabled: z.boolean().default(true).describe("Sync and call it (false: its tools are removed)"),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(3_600_000)
    .optional()
    .describe("Milliseconds to start and answer a list, and each call's default timeout"),
  tools: z
    .array(z.string().min(1))
    .optional()
    .describe("Only these upstream tool names are synced (default: all)"),
  idleStopMs: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("A stdio server unused this long is stopped (default 300000; 0: never)"),
};

/** A folder a stdio server's sandbox shows read-only: absolute or under ~/, never the root or the kernel's own. */
const ReadOnlyPath = z
  .string()
  .regex(/^(~\/.+|\/.+)$/, "an absolute path or one under ~/")
  .refine(
    (p) => !/^\/(proc|sys|dev)(\/|$)/.test(p) && !/^\/+$/.test(p),
    "not /, /proc, /sys or /dev: the sandbox makes its own",
  );

export const StdioEntry = z
  .object({
    command: z
      .array(z.string().min(1))
      .min(1)
      .describe('Program and arguments (argv, never a shell string), e.g. ["npx", "-y", "some-server"]'),
    env: z.record(z.string(), z.string()).optional().describe("Variables besides the allow-listed ones"),
    cwd: z.string().min(1).optional().describe("Working directory, relative to the workspace"),
    readOnlyPaths: z
      .array(ReadOnlyPath)
      .max(32)
      .optional()
      .describe(
        "Folders its sandbox shows read-only besides the workspace, e.g. its install (a node_modules or a virtualenv); ~/ is the server's HOME. A person's setting: an entry a run wrote does not get them",
      ),
    net: z
      .array(z.string().min(1))
      .max(64)
      .optional()
      .describe(
        "Hosts it may reach through byteseek's egress proxy besides the policy's grants.default.net (host, host:port, *.domain, *; as in grants). A person's setting: an entry a run wrote does not get them",
      ),
    probeTimeoutMs: z
      .number()
      .int()
      .min(0)
      .max(600_000)
      .optional()
      .describe(
        "Milliseconds to wait for an answer to the 2026-07-28 probe (server/discover) before speaking 2025 to it: a server silent on it is a 2025 one (default 10000, at most timeoutMs; its start counts; 0: no probe, 2025 at once)",
      ),
    ...Common,
  })
  .strict();

/**
 * The settings of a stdio entry only a person may give: what its sandbox shows and reaches beyond
 * the policy's grant. A run's write setting them is refused (tools/gate/ownership.ts), and an entry whose
 * owner is a run is started without them (tools/mcp/upstream-sandbox.ts).
 */
export const PERSON_ONLY_FIELDS = ["readOnlyPaths", "net"] as const satisfies readonly (keyof StdioEntry)[];

export const HttpEntry = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .describe("The server's Streamable HTTP endpoint, e.g. https://host/mcp"),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe("Sent with every request (e.g. Authorization)"),
    oauth: OAuthConfig.optional().describe(
      "OAuth sign-in (kvspace mcp login): a pre-registered client, scopes, and the session byteseek keeps",
    ),
    ...Common,
  })
  .strict();

export const McpServerEntry = z.union([StdioEntry, HttpEntry]);

/** The secret fields (tools/mcp/secret-fields.ts) are fields of both entry shapes. */
SECRET_FIELDS satisfies readonly (keyof StdioEntry | keyof HttpEntry)[];

/**
 * A run's write of a registry entry that keeps a masked value (`"***"`, as it read it) keeps the
 * stored secret: a read-modify-write never replaces a credential with the mask.
 */
export function keepMaskedSecrets<T>(key: string, next: T, current: unknown): T {
  if (serverOfKey(key) === undefined || !isRecord(next) || !isRecord(current)) return next;
  const out: Record<string, unknown> = { ...next };
  let kept = false;
  for (const field of SECRET_FIELDS) {
    const n = next[field];
    const c = current[field];
    if (!isRecord(n) || !isRecord(c)) continue;
    const merged: Record<string, unknown> = { ...n };
    for (const [name, v] of Object.entries(n))
      if (v === SECRET_MASK && c[name] !== undefined) {
        merged[name] = c[name];
        kept = true;
      }
    out[field] = merged;
  }
  return kept ? (out as T) : next;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
export type McpServerEntry = z.infer<typeof McpServerEntry>;
export type StdioEntry = z.infer<typeof StdioEntry>;
export type HttpEntry = z.infer<typeof HttpEntry>;

export function isStdio(entry: McpServerEntry): entry is StdioEntry {
  return "command" in entry;
}

export type ParsedEntry = { ok: true; entry: McpServerEntry } | { ok: false; problems: string[] };

/** Validates a registry value; `command` and `url` together, or neither, is a clear problem. */
export function parseEntry(raw: unknown): ParsedEntry {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) {
    const o = raw as Record<string, unknown>;
    if ("command" in o && "url" in o)
      return { ok: false, problems: ["give either command (stdio) or url (Streamable HTTP), not both"] };
    if (!("command" in o) && !("url" in o))
      return {
        ok: false,
        problems: ['give command (["prog", "arg", …]) for stdio or url for Streamable HTTP'],
      };
    const schema = "command" in o ? StdioEntry : HttpEntry;
    const parsed = schema.safeParse(raw);
    return parsed.success
      ? { ok: true, entry: parsed.data }
      : { ok: false, problems: zodProblems(parsed.error, schema) };
  }
  return { ok: false, problems: ["a registry entry is a json object: {command: [...]} or {url: …}"] };
}

/** The server a registry key names, or undefined for keys that are not `/byteseek/mcp/<server>`. */
export function serverOfKey(key: string): string | undefined {
  if (!key.startsWith(MCP_DIR)) return undefined;
  const rest = key.slice(MCP_DIR.length);
  return rest !== "" && !rest.includes("/") ? rest : undefined;
}

/**
 * The tree name of an upstream tool: `<server>.<tool>` with the tool lowercased and every
 * character outside `[a-z0-9_-]` replaced by `_` (a leading non-letter gets a `t` before it), cut
 * to fit 64 characters; names that collide after mapping get `_2`, `_3`… in upstream order.
 */
export function mapToolNames(server: string, upstream: readonly string[]): Map<string, string> {
  const room = 64 - server.length - 1;
  const used = new Set<string>();
  const out = new Map<string, string>();
  for (const name of upstream) {
    let base = name.toLowerCase().replace(/[^a-z0-9_-]/g, "_");
    if (!/^[a-z]/.test(base)) base = `t${base}`;
    base = base.slice(0, room);
    let candidate = base;
    for (let n = 2; used.has(candidate); n++) {
      const suffix = `_${n}`;
      candidate = `${base.slice(0, room - suffix.length)}${suffix}`;
    }
    used.add(candidate);
    out.set(name, `${server}.${candidate}`);
  }
  return out;
}
