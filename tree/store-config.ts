/**
 * Where the store is and how to open it, read once from the settings (`KVSPACE` and the
 * `BYTESEEK_*` store variables) for the server, `kvspace` and `byteseek run|chat` alike.
 *
 * `KVSPACE` is a folder (the embedded LevelDB store), `etcd://host:2379[,host2…][/prefix]` (a tree
 * shared on etcd v3) or `http(s)://host:port` (a running byteseek server, for the CLI). Anything
 * else that looks like a URL (`htp://x`, `etcd:` with no members) is refused rather than taken
 * for a folder. Each setting is checked against the engine it would configure: a setting the
 * chosen engine does not have is refused, never silently ignored — except through a server,
 * whose store settings are its own (the CLI's environment often serves both).
 */
import { resolve } from "node:path";
import { TreeError } from "./errors.js";
import type { EtcdAuth } from "./etcd/auth.js";
import type { EtcdTlsFiles } from "./etcd/tls.js";
import { type HistoryLimit, parseHistoryLimit } from "./history-limit.js";
import { createLevelTree, type TreeOptions } from "./level-tree.js";
import type { Db } from "./mutation.js";
import type { Tree } from "./types.js";

/** The default size of the cache of nodes read lately, per server. */
export const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;

/** Where `KVSPACE` says the store is: a folder, an etcd cluster, or a byteseek server. */
export type StoreLocation =
  | { backend: "classic"; location: string }
  | { backend: "etcd"; endpoints: string[]; prefix?: string }
  | { backend: "http"; url: string };

/** The store to open, with the settings its engine takes (`openTree` takes the first two as they are). */
export type StoreSpec =
  | {
      backend: "classic";
      location: string;
      sync: "always" | "never";
      cacheBytes: number;
      historyLimit?: HistoryLimit;
    }
  | {
      backend: "etcd";
      endpoints: string[];
      prefix?: string;
      cacheBytes: number;
      historyLimit?: HistoryLimit;
      /** The TLS files (paths; read when the tree opens): the members are then reached over TLS. */
      tls?: EtcdTlsFiles;
      /** The largest answer taken from etcd, in bytes (BYTESEEK_ETCD_MAX_ANSWER). */
      maxAnswerBytes?: number;
      /** The etcd user to log in as (BYTESEEK_ETCD_USER, BYTESEEK_ETCD_PASSWORD). */
      auth?: EtcdAuth;
    }
  | { backend: "http"; url: string };

/** The store settings, as the environment names them. */
export interface StoreSettings {
  KVSPACE?: string | undefined;
  BYTESEEK_SYNC?: string | undefined;
  BYTESEEK_CACHE?: string | undefined;
  BYTESEEK_HISTORY?: string | undefined;
  BYTESEEK_ETCD_CA?: string | undefined;
  BYTESEEK_ETCD_CERT?: string | undefined;
  BYTESEEK_ETCD_KEY?: string | undefined;
  BYTESEEK_ETCD_MAX_ANSWER?: string | undefined;
  BYTESEEK_ETCD_USER?: string | undefined;
  BYTESEEK_ETCD_PASSWORD?: string | undefined;
}

/** Which engines take each setting (KVSPACE chooses the engine). */
const ENGINES_OF: Record<Exclude<keyof StoreSettings, "KVSPACE">, ReadonlyArray<StoreSpec["backend"]>> = {
  BYTESEEK_SYNC: ["classic"],
  BYTESEEK_CACHE: ["classic", "etcd"],
  BYTESEEK_HISTORY: ["classic", "etcd"],
  BYTESEEK_ETCD_CA: ["etcd"],
  BYTESEEK_ETCD_CERT: ["etcd"],
  BYTESEEK_ETCD_KEY: ["etcd"],
  BYTESEEK_ETCD_MAX_ANSWER: ["etcd"],
  BYTESEEK_ETCD_USER: ["etcd"],
  BYTESEEK_ETCD_PASSWORD: ["etcd"],
};

const WHY_NOT: Record<string, string> = {
  "BYTESEEK_SYNC/etcd":
    "etcd fsyncs every write to its own log (its --unsafe-no-fsync says otherwise); unset BYTESEEK_SYNC",
};

const invalid = (message: string, details: Record<string, unknown> = {}) =>
  new TreeError("TREE_INVALID_OPTION", message, details);

/**
 * Reads `KVSPACE` (default `./data`): `etcd://host:2379[,host2:2379…][/prefix]` (port 2379 when
 * omitted; the prefix of the tree's keys in etcd, default `byteseek/`), an `http(s)://` URL, or a
 * folder. Refuses with TREE_INVALID_OPTION a value that names a scheme it does not know, an etcd
 * URL without members or with a malformed one, and an http URL without a host.
 */
export function parseStoreUrl(kvspace = "./data"): StoreLocation {
  const text = kvspace.trim();
  if (text === "") return { backend: "classic", location: "./data" };
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase();
  // A drive letter (C:\data) is a folder; any other `word:` start is meant as a URL.
  const isDrive = scheme !== undefined && scheme.length === 1 && /^[A-Za-z]:[\\/]/.test(text);
  if (scheme === undefined || isDrive) return { backend: "classic", location: text };
  if (scheme === "http" || scheme === "https") return parseHttp(text);
  if (scheme === "etcd") return parseEtcd(text);
  if (scheme === "file") {
    const path = /^file:\/\/(\/.*)$/i.exec(text)?.[1];
    if (path) return { backend: "classic", location: decodeURIComponent(path) };
  }
  throw invalid(
    `KVSPACE=${kvspace} is neither a folder nor a store URL; use a folder (./data), etcd://host:2379[/prefix] or http://host:port`,
    { kvspace },
  );
}

function parseHttp(text: string): StoreLocation {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || url.hostname === "" || !/^https?:\/\/[^/]/i.test(text))
    throw invalid(`KVSPACE=${text} is not a server URL; use http://host:port (e.g. http://127.0.0.1:7411)`, {
      kvspace: text,
    });
  return { backend: "http", url: text.replace(/\/+$/, "") };
}

function parseEtcd(text: string): StoreLocation {
  const m = /^etcd:\/\/([^/]*)(\/.*)?$/i.exec(text);
  if (!m || (m[1] ?? "") === "")
    throw invalid(`KVSPACE=${text} names no etcd member; use etcd://host:2379[,host2:2379][/prefix]`, {
      kvspace: text,
    });
  const endpoints = (m[1] ?? "").split(",").map((h) => h.trim());
  for (const h of endpoints)
    if (!/^(\[[0-9a-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$/i.test(h))
      throw invalid(`invalid etcd endpoint ${JSON.stringify(h)} in KVSPACE=${text}`, { endpoint: h });
  const path = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  return {
    backend: "etcd",
    endpoints: endpoints.map((h) => (/:[0-9]+$/.test(h) ? h : `${h}:2379`)),
    ...(path === "" ? {} : { prefix: `${path}/` }),
  };
}

/**
 * The store the settings name, every setting checked: TREE_INVALID_OPTION names the variable,
 * what is wrong and what to do. A relative folder is resolved against `cwd`.
 */
export function resolveStore(settings: StoreSettings, cwd: string = process.cwd()): StoreSpec {
  const where = parseStoreUrl(settings.KVSPACE);
  if (where.backend === "http") return where;
  for (const name of Object.keys(ENGINES_OF) as Array<keyof typeof ENGINES_OF>) {
    const value = settings[name];
    if (value === undefined || value === "" || ENGINES_OF[name].includes(where.backend)) continue;
    throw invalid(
      `${name} does not apply to a store on ${where.backend} (KVSPACE=${settings.KVSPACE}): ${WHY_NOT[`${name}/${where.backend}`] ?? `unset ${name}`}`,
      { setting: name, backend: where.backend },
    );
  }
  const cacheBytes = settings.BYTESEEK_CACHE
    ? parseSize("BYTESEEK_CACHE", settings.BYTESEEK_CACHE, true)
    : DEFAULT_CACHE_BYTES;
  const history = settings.BYTESEEK_HISTORY
    ? { historyLimit: parseHistoryLimit(settings.BYTESEEK_HISTORY, "BYTESEEK_HISTORY") }
    : {};
  if (where.backend === "etcd") return { ...where, cacheBytes, ...history, ...etcdSettings(settings, cwd) };
  const sync = settings.BYTESEEK_SYNC || "never";
  if (sync !== "always" && sync !== "never")
    throw invalid(`BYTESEEK_SYNC must be always or never, got ${JSON.stringify(sync)}`, { sync });
  return { backend: "classic", location: resolve(cwd, where.location), sync, cacheBytes, ...history };
}

/** The TLS files (resolved against `cwd`) and the answer cap, as the etcd settings give them. */
function etcdSettings(
  settings: StoreSettings,
  cwd: string,
): { tls?: EtcdTlsFiles; maxAnswerBytes?: number; auth?: EtcdAuth } {
  const file = (v: string | undefined) => (v === undefined || v === "" ? undefined : resolve(cwd, v));
  const [ca, cert, key] = [
    file(settings.BYTESEEK_ETCD_CA),
    file(settings.BYTESEEK_ETCD_CERT),
    file(settings.BYTESEEK_ETCD_KEY),
  ];
  if ((cert === undefined) !== (key === undefined))
    throw invalid(
      "BYTESEEK_ETCD_CERT and BYTESEEK_ETCD_KEY go together (a client certificate and its key); set both, or neither",
      { setting: cert === undefined ? "BYTESEEK_ETCD_CERT" : "BYTESEEK_ETCD_KEY" },
    );
  const tls = ca || cert ? { ...(ca ? { ca } : {}), ...(cert && key ? { cert, key } : {}) } : undefined;
  const cap = settings.BYTESEEK_ETCD_MAX_ANSWER;
  const [username, password] = [settings.BYTESEEK_ETCD_USER || undefined, settings.BYTESEEK_ETCD_PASSWORD];
  if (username === undefined && password !== undefined && password !== "")
    throw invalid("BYTESEEK_ETCD_PASSWORD is set without BYTESEEK_ETCD_USER: name the etcd user it is for", {
      setting: "BYTESEEK_ETCD_USER",
    });
  return {
    ...(username === undefined ? {} : { auth: { username, password: password ?? "" } }),
    ...(tls ? { tls } : {}),
    ...(cap ? { maxAnswerBytes: parseSize("BYTESEEK_ETCD_MAX_ANSWER", cap) } : {}),
  };
}

/** A size in bytes, or with a k/m suffix; refused with TREE_INVALID_OPTION naming the variable. */
export function parseSize(name: string, text: string, zeroAllowed = false): number {
  const m = /^([0-9]+)\s*(k|kb|kib|m|mb|mib)?$/i.exec(text.trim());
  if (!m || (Number(m[1]) === 0 && !zeroAllowed))
    throw invalid(`${name} must be a size in bytes (or with k/m), got ${JSON.stringify(text)}`, {
      setting: name,
    });
  const unit = (m[2] ?? "").toLowerCase();
  return Number(m[1]) * (unit.startsWith("m") ? 1024 * 1024 : unit.startsWith("k") ? 1024 : 1);
}

/** How a store is named in logs and messages. */
export function describeStore(spec: StoreSpec): string {
  if (spec.backend === "classic") return spec.location;
  if (spec.backend === "http") return spec.url;
  return `etcd://${spec.endpoints.join(",")}/${spec.prefix ?? "byteseek/"}`;
}

export type OpenTreeOptions = TreeOptions &
  (
    | { backend: "memory" }
    | { backend: "classic"; location: string }
    | {
        backend: "etcd";
        endpoints: string[];
        prefix?: string;
        tls?: EtcdTlsFiles;
        maxAnswerBytes?: number;
        auth?: EtcdAuth;
        /** The etcd fast lane (tree/fast-lanes.ts); default: BYTESEEK_FAST (on). */
        fast?: boolean;
      }
  );

/** Opens a tree: classic-level in a folder, memory-level, or etcd (loaded only when asked for). */
export async function openTree(options: OpenTreeOptions): Promise<Tree> {
  if (options.backend === "etcd") {
    const { createEtcdTree, readEtcdTls } = await import("./etcd/index.js");
    const { sync: _embeddedOnly, onClose, tls, ...rest } = options;
    const tree = await createEtcdTree({ ...rest, ...(tls ? { tls: readEtcdTls(tls) } : {}) });
    if (!onClose) return tree;
    return { ...tree, close: () => tree.close().then(onClose) };
  }
  // Each engine is loaded when asked for: a one-shot `kvspace get` loads the native one only.
  let db: Db;
  if (options.backend === "memory") {
    const { MemoryLevel } = await import("memory-level");
    db = new MemoryLevel<string, string>({ keyEncoding: "utf8", valueEncoding: "utf8" });
  } else {
    const { ClassicLevel } = await import("classic-level");
    db = new ClassicLevel<string, string>(options.location, { keyEncoding: "utf8", valueEncoding: "utf8" });
  }
  try {
    await db.open();
  } catch (err) {
    throw openError(err, options.backend === "classic" ? options.location : "memory");
  }
  return createLevelTree(db, options);
}

function openError(err: unknown, location: string): TreeError {
  const cause = (err as { cause?: { code?: string } }).cause;
  if (cause?.code === "LEVEL_LOCKED")
    return new TreeError(
      "TREE_LOCKED",
      `the store at ${location} is in use by another process (a byteseek server, a byteseek mcp or run session, or a kvspace command): stop it first, or open another store folder`,
      { location },
      err,
    );
  return new TreeError(
    "TREE_UNAVAILABLE",
    `cannot open the store at ${location}: ${(err as Error).message}`,
    { location },
    err,
  );
}
