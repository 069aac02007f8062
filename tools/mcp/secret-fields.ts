/**
 * The fields of an MCP registry entry (`/byteseek/mcp/<server>`) that carry credentials —
 * `Authorization` headers, tokens in a server's environment, the OAuth client and the tokens of a
 * sign-in (`oauth`) — written once, for every reader: a
 * person reads them, nothing else does. Runs' tree tools, MCP resources, exports without
 * `--secrets` and the web page (until the person reveals them) show each value as SECRET_MASK,
 * the names kept. This file depends on nothing but the key map (which imports nothing), so the
 * web page runs it too.
 */
import { dirs } from "../../shared/keys.js";

export const SECRET_FIELDS = ["headers", "env", "oauth"] as const;

/** What a secret value reads as where it is hidden. */
export const SECRET_MASK = "***";

const REGISTRY_DIR = dirs.mcpServers;

/** Whether `key` is a registry entry `/byteseek/mcp/<server>`. */
export function isRegistryKey(key: string): boolean {
  if (!key.startsWith(REGISTRY_DIR)) return false;
  const rest = key.slice(REGISTRY_DIR.length);
  return rest !== "" && !rest.includes("/");
}

/**
 * The value at `key` with a registry entry's secret fields masked (a copy), or `value` itself when
 * there is nothing to mask. `value` is the json of the tree value.
 */
export function maskSecrets<T>(key: string, value: T): T {
  if (!isRegistryKey(key) || value === null || typeof value !== "object" || Array.isArray(value))
    return value;
  const entry = value as Record<string, unknown>;
  if (!SECRET_FIELDS.some((f) => entry[f] !== undefined)) return value;
  const out: Record<string, unknown> = { ...entry };
  for (const field of SECRET_FIELDS) {
    const v = entry[field];
    if (v === undefined) continue;
    out[field] =
      v !== null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.keys(v).map((name) => [name, SECRET_MASK]))
        : SECRET_MASK;
  }
  return out as T;
}

/** What masking reads of an export line (tree/types.ts ExportEntry; not imported: the web page runs this file). */
interface ExportLine {
  key: string;
  kind: string;
  value?: unknown;
  history?: ReadonlyArray<{ kind: string; value: unknown }>;
}

/**
 * An export line with a registry entry's secret fields masked, in its value and every retained
 * version (an export without `--secrets`: `kvspace export`, `GET /v1/export`).
 */
export function maskExportEntry<E extends ExportLine>(e: E): E {
  if (!isRegistryKey(e.key) || e.kind !== "json") return e;
  return {
    ...e,
    ...(e.value === undefined ? {} : { value: maskSecrets(e.key, e.value) }),
    ...(e.history
      ? {
          history: e.history.map((h) =>
            h.kind === "json" ? { ...h, value: maskSecrets(e.key, h.value) } : h,
          ),
        }
      : {}),
  };
}
