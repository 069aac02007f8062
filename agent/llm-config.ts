import { z } from "zod";
import type { Tree } from "../tree/types.js";
import type { TreeValue } from "../tree/value.js";
import { AgentError } from "./errors.js";

/**
 * The model provider settings. Read from the environment (`BYTESEEK_LLM_*`) with the tree's
 * `/byteseek/llm/*` as fallback; the environment wins.
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
  api: { env: "BYTESEEK_LLM_API", key: "/byteseek/llm/api" },
  url: { env: "BYTESEEK_LLM_URL", key: "/byteseek/llm/url" },
  model: { env: "BYTESEEK_LLM_MODEL", key: "/byteseek/llm/model" },
  key: { env: "BYTESEEK_LLM_KEY", key: "/byteseek/llm/key" },
  maxTokens: { env: "BYTESEEK_LLM_MAX_TOKENS", key: "/byteseek/llm/maxTokens" },
  timeoutMs: { env: "BYTESEEK_LLM_TIMEOUT_MS", key: "/byteseek/llm/timeoutMs" },
  maxRetries: { env: "BYTESEEK_LLM_MAX_RETRIES", key: "/byteseek/llm/maxRetries" },
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
   * Settings a client sent with the turn; they win over the environment and the tree. The key
   * read here (environment or tree) goes only to the URL read here: with a client URL that differs,
   * only a key the client sent is used, so a client can never have the server's key sent to a URL
   * of its choosing.
   */
  client?: ClientLlmSettings;
}

/**
 * Resolves the settings. Missing api, url or model → `LLM_NOT_CONFIGURED` naming every variable to
 * set; an unusable value → `LLM_BAD_CONFIG` naming where it came from. The key's value never
 * appears in a message or in `details`.
 */
export async function resolveLlmConfig({ env, tree, client }: ResolveLlmConfigInput): Promise<LlmConfig> {
  const raw: Partial<Record<Field, { value: string | number; from: string }>> = {};
  for (const field of Object.keys(LLM_SETTINGS) as Field[]) {
    const found = fromEnv(env, field) ?? (tree ? await fromTree(tree, field) : undefined);
    if (found !== undefined) raw[field] = found;
  }
  if (client) {
    const own = raw.url;
    for (const field of Object.keys(LLM_SETTINGS) as Field[]) {
      const value = client[field]?.trim();
      if (value) raw[field] = { value, from: `${LLM_SETTINGS[field].env} sent by the client` };
    }
    const clientUrl = client.url?.trim();
    if (clientUrl && (own === undefined || !sameUrl(String(own.value), clientUrl)) && !client.key?.trim())
      delete raw.key;
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

  const { key, ...rest } = config;
  const result = rest as Omit<LlmConfig, "key">;
  if (typeof key === "string") Object.defineProperty(result, "key", { value: key, enumerable: false });
  return result as LlmConfig;
}

function fromEnv(
  env: Record<string, string | undefined>,
  field: Field,
): { value: string; from: string } | undefined {
  const name = LLM_SETTINGS[field].env;
  const value = env[name]?.trim();
  return value ? { value, from: name } : undefined;
}

async function fromTree(
  tree: Pick<Tree, "get">,
  field: Field,
): Promise<{ value: string | number; from: string } | undefined> {
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
  return { value: typeof value === "string" ? value.trim() : value, from: key };
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
