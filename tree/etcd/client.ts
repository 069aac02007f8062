/**
 * The etcd3 client as the tree uses it: the raw KV and Watch services (the tree builds its own
 * keys, compares and retries; its transactions, ranges and watch streams go through rpc.ts, on
 * connections of its own made from the same options), a deadline on every unary call, fast
 * reconnects, and no hidden retries — a transaction re-sent blindly could be applied twice, so
 * retrying is the tree's job.
 */
import type { ChannelOptions } from "@grpc/grpc-js";
import {
  ClientClosedError,
  Etcd3,
  EtcdError,
  GRPCCancelledError,
  GRPCGenericError,
  type IKeyValue,
  type IResponseHeader,
  isRecoverableError,
} from "etcd3";
import { TreeError } from "../errors.js";
import type { EtcdAuth } from "./auth.js";
import {
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_KEEPALIVE_TIMEOUT_MS,
  DEFAULT_MAX_ANSWER_BYTES,
  type EtcdTls,
  type H2Options,
} from "./h2.js";

export interface EtcdClientOptions {
  /** `host:port` (or `http://host:port`, `https://host:port`) of each member. */
  endpoints: string[];
  /** Deadline of each call to etcd, in ms (default 5000). */
  callTimeoutMs?: number;
  /** TLS material: every member is then reached over TLS (`https`), with it. */
  tls?: EtcdTls;
  /** The largest answer accepted from etcd, in bytes (default 64 MiB). */
  maxAnswerBytes?: number;
  /** Keepalive pings while calls wait: every `keepaliveMs`, each given `keepaliveTimeoutMs` (10 s, 5 s). */
  keepaliveMs?: number;
  keepaliveTimeoutMs?: number;
  /** The etcd user to log in as, when etcd has auth enabled (auth.ts). */
  auth?: EtcdAuth;
}

/**
 * Each endpoint as a URL etcd3 takes; all `https` when TLS material is given. Refuses a mix of
 * `http` and `https` members (etcd3 would throw an untyped error), and an `http` one with TLS material.
 */
export function memberUrls(endpoints: string[], tls: EtcdTls | undefined): string[] {
  const scheme = (e: string) => /^(https?):\/\//i.exec(e)?.[1]?.toLowerCase();
  const schemes = new Set(endpoints.map((e) => scheme(e) ?? (tls ? "https" : "http")));
  if (schemes.size > 1 || (tls && schemes.has("http")))
    throw new TreeError(
      "TREE_INVALID_OPTION",
      tls
        ? `etcd members ${endpoints.join(",")}: TLS settings are given, so every member is reached over https; drop the http:// ones`
        : `etcd members ${endpoints.join(",")} mix http:// and https://; reach them all one way`,
    );
  return endpoints.map((e) => (scheme(e) ? e : `${tls ? "https" : "http"}://${e}`));
}

/**
 * The signal etcd3's pool hands each call from its policy: nothing here ever aborts a call (the
 * deadline does), so one signal serves them all (an AbortController a call costs measurably).
 */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Per member: after a connection failure, skip the member for `openMs` (the pool then tries the
 * next one), so a dead member of a cluster costs one failed call, not one in three.
 */
export class MemberSkipped extends Error {}

/** How long a member that failed a call is skipped (the next call goes to another). */
export const SKIP_MS = 500;

function memberBreaker(openMs: number) {
  let openUntil = 0;
  return {
    // Async, so a throw is a rejection: etcd3's markFailed re-throws through it and catches.
    async execute<T>(fn: (ctx: { signal: AbortSignal }) => T | Promise<T>): Promise<T> {
      if (Date.now() < openUntil) throw new MemberSkipped("etcd member skipped after a connection failure");
      try {
        return await fn({ signal: NEVER_ABORTED });
      } catch (err) {
        // A stream we cancelled ourselves says nothing about the member.
        if (err instanceof Error && isRecoverableError(err) && !(err instanceof GRPCCancelledError))
          openUntil = Date.now() + openMs;
        throw err;
      }
    },
  };
}

/** Runs the call once: retrying is the tree's job. */
const once = {
  execute: async <T>(fn: (ctx: { signal: AbortSignal }) => T | Promise<T>): Promise<T> =>
    fn({ signal: NEVER_ABORTED }),
};

/** A client that fails fast when etcd is away and reconnects quickly when it is back. */
export function connectEtcd(options: EtcdClientOptions): Etcd3 {
  const timeout = options.callTimeoutMs ?? 5000;
  const { tls } = options;
  return new Etcd3({
    hosts: memberUrls(options.endpoints, tls),
    // grpc-js's createSsl takes a missing root certificate as "the system's CAs".
    ...(tls && (tls.ca || tls.cert)
      ? { credentials: { rootCertificate: tls.ca as Buffer, privateKey: tls.key, certChain: tls.cert } }
      : {}),
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
    grpcOptions: channelOptions(options),
    ...(options.auth ? { auth: { username: options.auth.username, password: options.auth.password } } : {}),
    // biome-ignore lint/suspicious/noExplicitAny: cockatiel's IPolicy has more members than the pool calls.
    faultHandling: { host: () => memberBreaker(SKIP_MS) as any, global: once as any },
  });
}

/** The grpc-js channel options of every channel to etcd (etcd3's and rpc.ts's watch channels). */
export function channelOptions(options: EtcdClientOptions): ChannelOptions {
  return {
    "grpc.max_receive_message_length": options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
    "grpc.max_send_message_length": 64 * 1024 * 1024,
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.max_reconnect_backoff_ms": 1000,
    "grpc.keepalive_time_ms": options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS,
    "grpc.keepalive_timeout_ms": options.keepaliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS,
  };
}

/** The revision an etcd response was answered at. */
export function headerRev(header: IResponseHeader | undefined): number {
  return header ? Number(header.revision) : 0;
}

export const kvNum = (kv: IKeyValue, field: "create_revision" | "mod_revision" | "version"): number =>
  Number(kv[field]);

const COMPACTED = "required revision has been compacted";

/** Did etcd refuse a read because the revision asked for is compacted? */
export function isCompactedError(err: unknown): boolean {
  return err instanceof Error && err.message.includes(COMPACTED);
}

/** Did this come from talking to etcd (rather than from a bug on this side)? */
export function isEtcdFailure(err: unknown): boolean {
  return (
    err instanceof GRPCGenericError ||
    err instanceof EtcdError ||
    err instanceof ClientClosedError ||
    err instanceof MemberSkipped ||
    (err instanceof Error && /^\d+ [A-Z_]+: /.test(err.message))
  );
}

/** Is this a refusal by etcd itself (nothing was applied), rather than a lost connection? */
export function isEtcdRefusal(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return /etcdserver: (request is too large|too many operations|duplicate key|mvcc: database space exceeded)|exceeds the max|larger than max|compacted/.test(
    err.message,
  );
}

/** How etcd says a call needs a user, or refuses the one given. */
const AUTH_REFUSED =
  /etcdserver: (user name is empty|authentication failed|permission denied|invalid auth token)/;

/** How grpc-js (through node's TLS) says a member's certificate was not trusted. */
const TLS_REFUSED =
  /unable to verify the first certificate|self[- ]signed certificate|unable to get (local )?issuer certificate|certificate has expired|Hostname\/IP does not match/i;

/** The TreeError an etcd failure becomes: limits are the caller's, the rest is unavailability. */
export function treeErrorOf(err: unknown, what: string): TreeError {
  if (err instanceof TreeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/request is too large|larger than max|exceeds the max/.test(message))
    return new TreeError(
      "TREE_VALUE_TOO_LARGE",
      `etcd refused the write as too large (${message}); raise etcd's --max-request-bytes or store smaller values`,
      {},
      err,
    );
  if (message.includes("too many operations"))
    return new TreeError(
      "TREE_TXN_INVALID",
      `etcd refused the transaction as too many operations (${message}); split it, or raise etcd's --max-txn-ops`,
      {},
      err,
    );
  if (AUTH_REFUSED.test(message))
    return new TreeError(
      "TREE_UNAVAILABLE",
      `etcd refused the tree's login (${what}): ${message}; etcd has auth enabled: give an etcd user that may read and write the tree's prefix in BYTESEEK_ETCD_USER and its password in BYTESEEK_ETCD_PASSWORD`,
      {},
      err,
    );
  if (TLS_REFUSED.test(message))
    return new TreeError(
      "TREE_UNAVAILABLE",
      `etcd is unavailable (${what}): ${message}; the member's TLS certificate was refused: give the CA that signed it (BYTESEEK_ETCD_CA), or check that the member's name is in its certificate`,
      {},
      err,
    );
  return new TreeError("TREE_UNAVAILABLE", `etcd is unavailable (${what}): ${message}`, {}, err);
}

/**
 * Whether an etcd of this version answers a watch progress request behind the events it covers.
 * Before 3.4.31 and 3.5.13 the answer could overtake events already waiting to be sent (etcd
 * issues 15220 and 17507), so a progress revision did not prove that every earlier event had
 * arrived: a cache moved up to it could answer a read without a write it had not yet applied.
 */
export function progressFollowsEvents(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor !== 4 && minor !== 5) return minor > 5;
  return patch >= (minor === 4 ? 31 : 13);
}

/** Asks etcd its version: whether its progress answers can be trusted (false when it does not say). */
export async function ordersProgress(client: Etcd3): Promise<boolean> {
  try {
    return progressFollowsEvents((await client.maintenance.status()).version);
  } catch {
    return false;
  }
}

/** How rpc.ts's unary calls reach the members: as the client's own channels do. */
export function wireOptions(options: EtcdClientOptions): H2Options {
  const { tls, maxAnswerBytes, keepaliveMs, keepaliveTimeoutMs } = options;
  return {
    secure: memberUrls(options.endpoints, tls)[0]?.startsWith("https:") ?? false,
    ...(tls ? { tls } : {}),
    ...(maxAnswerBytes === undefined ? {} : { maxAnswerBytes }),
    ...(keepaliveMs === undefined ? {} : { keepaliveMs }),
    ...(keepaliveTimeoutMs === undefined ? {} : { keepaliveTimeoutMs }),
  };
}
