import { z } from "zod";
import { keys } from "../shared/keys.js";
import type { Tree } from "../tree/types.js";
import type { TreeValue } from "../tree/value.js";
import { AgentError } from "./errors.js";

/**
 * The model provider settings. Read from the environment (`BYTESEEK_LLM_*`) with the tree's
 * `/byteseek/llm/*` as fallback; the environment wins. A key goes only to the URL read beside it
 * (see `resolveLlmConfig`).
 *
 * `key` is a non-enumerable property of the object `resolveLlmConfig` returns, so logging or
 * serialising the config (pino, JSON.stringify, util.inspect) never shows it; read it as `config.key`.
 * A spread copy (`{...config}`) has no key.
 */
export const LlmConfig = z.object({
  api: z.enum(["openai", "anthropic"]),
  /** Base URL: `…/v1` for OpenAI-compatible servers (we POST `{url}/chat/completions`), the host for Anthropic (`{url}/v1/messages`). */
  url: z.url({ protocol: /^https?$/ }),
  model: z.string().min(1),
  key: z.string().min(1).optional(),
  maxTokens: z.int().positive(),
  /** Longest wait for the reply to start, and for each next piece of it. */
  timeoutMs: z.int().positive(),
  /** Attempts after the first on 429, 5xx and network failures. */
  maxRetries: z.int().min(0).max(20),
});
export type LlmConfig = z.infer<typeof LlmConfig>;

export const LLM_DEFAULTS = { maxTokens: 4096, timeoutMs: 120_000, maxRetries: 4 } as const;

type Field = keyof LlmConfig;

/** Where each setting comes from: its variable and its tree key. */
export const LLM_SETTINGS: Record<Field, { env: string; key: string }> = {
  api: { env: "BYTESEEK_LLM_API", key: keys.llm("api") },
  url: { env: "BYTESEEK_LLM_URL", key: keys.llm("url") },
  model: { env: "BYTESEEK_LLM_MODEL", key: keys.llm("model") },
  key: { env: "BYTESEEK_LLM_KEY", key: keys.llm("key") },
  maxTokens: { env: "BYTESEEK_LLM_MAX_TOKENS", key: keys.llm("maxTokens") },
  timeoutMs: { env: "BYTESEEK_LLM_TIMEOUT_MS", key: keys.llm("timeoutMs") },
  maxRetries: { env: "BYTESEEK_LLM_MAX_RETRIES", key: keys.llm("maxRetries") },
};

const REQUIRED: Field[] = ["api", "url", "model"];
const NUMERIC = new Set<Field>(["maxTokens", "timeoutMs", "maxRetries"]);

/**
 * The settings a client sends with a turn it asks a server to run (its own `BYTESEEK_LLM_*`, as
 * text, as in the environment). Every field is optional; the key only when the person said so.
 */
export const ClientLlmSettings = z
  .object({
    api: z.string().max(100),
    url: z.string().max(2000),
    model: z.string().max(500),
    key: z.string().max(10_000),
    maxTokens: z.string().max(20),
    timeoutMs: z.string().max(20),
    maxRetries: z.string().max(20),
  })
  .partial()
  .strict()
  .describe("Model settings from the client (its BYTESEEK_LLM_*); they win over the server's");
export type ClientLlmSettings = z.infer<typeof ClientLlmSettings>;

/** The client's `BYTESEEK_LLM_*` as settings to send: the key only with `withKey`. */
export function clientLlmSettings(
  env: Record<string, string | undefined>,
  { withKey = false }: { withKey?: boolean } = {},
): ClientLlmSettings {
  const out: ClientLlmSettings = {};
  for (const field of Object.keys(LLM_SETTINGS) as Field[]) {
    if (field === "key" && !withKey) continue;
    const value = env[LLM_SETTINGS[field].env]?.trim();
    if (value) out[field] = value;
  }
  return out;
}

export interface ResolveLlmConfigInput {
  env: Record<string, string | undefined>;
  /** Optional: without a tree only the environment is read. */
  tree?: Pick<Tree, "get">;
  /**
   * Settings a client sent with the turn; they win over the environment and the tree. A URL of the
   * client's own is refused unless `BYTESEEK_LLM_CLIENT_URLS` (in `env`) lists its origin: the
   * server would otherwise fetch any address a client names, past the policy's `net` grants.
   */
  client?: ClientLlmSettings;
}

/** Where a setting was read; a key is only sent to a URL from the same place or a more trusted one. */
type Source = "env" | "tree" | "client";
const TRUST: Record<Source, number> = { client: 0, tree: 1, env: 2 };

/** The variable listing the origins a client may name as its model URL (`*`: any). */
export const CLIENT_URLS_ENV = "BYTESEEK_LLM_CLIENT_URLS";

type Found = { value: string | number; from: string; source: Source };

/**
 * Resolves the settings. Missing api, url or model → `LLM_NOT_CONFIGURED` naming every variable to
 * set; an unusable value → `LLM_BAD_CONFIG` naming where it came from; a client's URL the server
 * does not allow → `LLM_CLIENT_REFUSED` naming what to set. The key's value never appears in a
 * message or in `details`.
 *
 * The key goes only where the place it was read from points: the environment's key to the
 * environment's URL, the tree's to the tree's (or the environment's). Anyone who can write
 * `/byteseek/llm/url` or send a turn could otherwise have the server's key sent to an address of
 * theirs. A key paired with a URL from a less trusted place is dropped when the client chose the
 * URL (its own model, reached without the server's key) and refused otherwise.
 */
export async function resolveLlmConfig({ env, tree, client }: ResolveLlmConfigInput): Promise<LlmConfig> {
  const raw: Partial<Record<Field, Found>> = {};
  const urls: Partial<Record<Source, string>> = {};
  for (const field of Object.keys(LLM_SETTINGS) as Field[]) {
    const found = fromEnv(env, field) ?? (tree ? await fromTree(tree, field) : undefined);
    if (found === undefined) continue;
    raw[field] = found;
    if (field === "url") urls[found.source] = String(found.value);
  }
  if (client) {
    for (const field of Object.keys(LLM_SETTINGS) as Field[]) {
      const value = client[field]?.trim();
      if (value)
        raw[field] = { value, from: `${LLM_SETTINGS[field].env} sent by the client`, source: "client" };
    }
  }
  const url = raw.url;
  const key = raw.key;
  if (url?.source === "client") {
    const serverUrl = urls.env ?? urls.tree;
    const value = String(url.value);
    if (!LlmConfig.shape.url.safeParse(value).success) throw badSetting("url", url.from, value);
    if (serverUrl === undefined || !sameUrl(serverUrl, value)) clientUrlAllowed(env, value);
    // the server's own URL, named by the client: it is the server's, with the server's key
    if (serverUrl !== undefined && sameUrl(serverUrl, value)) url.source = urls.env ? "env" : "tree";
  }
  if (key !== undefined && url !== undefined && !keyMayGo(key.source, String(url.value), url.source, urls)) {
    if (url.source === "client") delete raw.key;
    else
      throw new AgentError(
        "LLM_BAD_CONFIG",
        `${key.from} is sent only to the URL set beside it, and the URL comes from ${url.from}: ` +
          `set ${LLM_SETTINGS.url.env} on the server to that URL if the key is meant for it, ` +
          `or write that URL's own key to ${LLM_SETTINGS.key.key}`,
        { setting: url.from },
      );
  }

  const missing = REQUIRED.filter((field) => raw[field] === undefined);
  if (missing.length > 0) {
    const vars = missing.map((f) => LLM_SETTINGS[f].env);
    const keys = missing.map((f) => LLM_SETTINGS[f].key);
    const api = `BYTESEEK_LLM_API is "openai" (OpenAI-compatible chat completions) or "anthropic"`;
    throw new AgentError(
      "LLM_NOT_CONFIGURED",
      client
        ? `no model provider configured: looked for ${list(vars)} in the settings the client sent, ` +
            `in the server's environment and at ${list(keys)} in the server's tree; set them in the ` +
            `client's shell (byteseek run sends them) or on the server (kvspace set ${keys[0]} string:…); ${api}`
        : `no model provider configured: set ${list(vars)} (or write ${list(keys)} in the tree); ${api}`,
      { missing: vars },
    );
  }

  const config: Record<string, unknown> = {};
  for (const field of Object.keys(LLM_SETTINGS) as Field[]) {
    const found = raw[field];
    const value = found === undefined ? (LLM_DEFAULTS as Record<string, number>)[field] : found.value;
    if (value === undefined) continue;
    const checked = LlmConfig.shape[field].safeParse(NUMERIC.has(field) ? toNumber(value) : value);
    if (!checked.success) throw badSetting(field, found?.from ?? "the default", value);
    config[field] = field === "url" ? normaliseUrl(String(checked.data), config.api) : checked.data;
  }

  const { key: secret, ...rest } = config;
  const result = rest as Omit<LlmConfig, "key">;
  if (typeof secret === "string") Object.defineProperty(result, "key", { value: secret, enumerable: false });
  return result as LlmConfig;
}

function fromEnv(env: Record<string, string | undefined>, field: Field): Found | undefined {
  const name = LLM_SETTINGS[field].env;
  const value = env[name]?.trim();
  return value ? { value, from: name, source: "env" } : undefined;
}

async function fromTree(tree: Pick<Tree, "get">, field: Field): Promise<Found | undefined> {
  const key = LLM_SETTINGS[field].key;
  const node = await tree.get(key);
  if (node === undefined || node.kind === "index") return undefined;
  const value = plain((node as { value: TreeValue }).value);
  if (value === undefined)
    throw new AgentError(
      "LLM_BAD_CONFIG",
      `${key} must be a char/utf8${NUMERIC.has(field) ? " or int64" : ""} value, not ${node.kind}`,
      { setting: key },
    );
  if (typeof value === "string" && value.trim() === "") return undefined;
  return { value: typeof value === "string" ? value.trim() : value, from: key, source: "tree" };
}

function plain(value: TreeValue): string | number | undefined {
  if (value.kind === "char/utf8") return value.value;
  if (value.kind === "int64") return Number(value.value);
  return undefined;
}

function toNumber(value: string | number): number {
  if (typeof value === "number") return value;
  return /^\d+$/.test(value) ? Number(value) : Number.NaN;
}

function badSetting(field: Field, from: string, value: string | number): AgentError {
  const shown = field === "key" ? "" : ` (got ${JSON.stringify(String(value).slice(0, 100))})`;
  const want: Record<Field, string> = {
    api: 'must be "openai" or "anthropic"',
    url: "must be an http:// or https:// URL",
    model: "must name a model",
    key: "must not be empty",
    maxTokens: "must be a positive integer",
    timeoutMs: "must be a positive integer (milliseconds)",
    maxRetries: "must be an integer from 0 to 20",
  };
  const where = from.startsWith("/") ? `${from} (or set ${LLM_SETTINGS[field].env})` : from;
  return new AgentError("LLM_BAD_CONFIG", `${where} ${want[field]}${shown}`, { setting: from });
}

/**
 * May a key read from `keySource` go to `url` (read from `urlSource`)? Yes when the URL's place is
 * as trusted as the key's, or the URL is exactly one set beside the key or above it (the same base
 * URL, not merely the same origin: one host may serve many accounts under different paths).
 */
function keyMayGo(
  keySource: Source,
  url: string,
  urlSource: Source,
  urls: Partial<Record<Source, string>>,
): boolean {
  if (TRUST[urlSource] >= TRUST[keySource]) return true;
  return (Object.keys(urls) as Source[]).some(
    (s) => TRUST[s] >= TRUST[keySource] && urls[s] !== undefined && sameUrl(urls[s], url),
  );
}

/**
 * Refuses a client's model URL unless `BYTESEEK_LLM_CLIENT_URLS` lists its origin (or is `*`).
 * The list holds origins only (`http://host:port`): a path would suggest a narrower rule than an
 * origin check gives.
 */
function clientUrlAllowed(env: Record<string, string | undefined>, url: string): void {
  const origin = new URL(url).origin;
  const listed = clientUrlOrigins(env);
  if (listed === "*" || listed.includes(origin)) return;
  throw new AgentError(
    "LLM_CLIENT_REFUSED",
    `this server does not call model URLs its clients name (${LLM_SETTINGS.url.env} ${url} was sent by the client): ` +
      `to use the server's own model, unset ${LLM_SETTINGS.url.env} (and the other BYTESEEK_LLM_*) in the client's shell; ` +
      `to let clients use that model, start the server with ${CLIENT_URLS_ENV}=${origin} (a comma list of origins, or * for any)`,
    { setting: CLIENT_URLS_ENV, origin },
  );
}

/**
 * `BYTESEEK_LLM_CLIENT_URLS` read: `*`, or the origins it lists (none when unset). An entry that is
 * not an http(s) origin → `LLM_BAD_CONFIG` naming it; the server checks it at start.
 */
export function clientUrlOrigins(env: Record<string, string | undefined>): "*" | string[] {
  const origins: string[] = [];
  for (const entry of (env[CLIENT_URLS_ENV] ?? "").split(",").map((s) => s.trim())) {
    if (entry === "") continue;
    if (entry === "*") return "*";
    let allowed: URL;
    try {
      allowed = new URL(entry);
    } catch {
      throw listError(entry);
    }
    if (!/^https?:$/.test(allowed.protocol) || allowed.pathname !== "/" || allowed.search || allowed.hash)
      throw listError(entry);
    origins.push(allowed.origin);
  }
  return origins;
}

function listError(entry: string): AgentError {
  return new AgentError(
    "LLM_BAD_CONFIG",
    `${CLIENT_URLS_ENV} lists origins (http://host:port or https://host) or *, got ${JSON.stringify(entry.slice(0, 100))}`,
    { setting: CLIENT_URLS_ENV },
  );
}

/** Two spellings of one base URL (trailing slashes, case of scheme and host aside). */
function sameUrl(a: string, b: string): boolean {
  const canonical = (u: string) => {
    try {
      return new URL(u.trim()).href.replace(/\/+$/, "");
    } catch {
      return u.trim();
    }
  };
  return canonical(a) === canonical(b);
}

/** No trailing slash; an Anthropic URL given with its `/v1` loses it, since we append `/v1/messages`. */
function normaliseUrl(url: string, api: unknown): string {
  let out = url.replace(/\/+$/, "");
  if (api === "anthropic") out = out.replace(/\/v1$/, "");
  return out;
}

function list(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}
