/**
 * Unary gRPC calls written on a plain node:http2 session per etcd member: the request framed as
 * gRPC frames it (a 5-byte prefix, then the message), the answer's message read back, its status
 * from the trailers. grpc-js builds a call object, an interceptor chain, a filter stack and an
 * AsyncResource per call; at 13 writes a batch that was a sixth of byteseek's CPU per PUT on etcd
 * (bench/RESULTS.md). The member, its breaker, the auth token and the deadline are still chosen by
 * etcd3's pool and rpc.ts, as for its own calls; only the wire is ours. Errors come out as grpc-js
 * would make them (`<code> <NAME>: <details>`, with `code` and `details`), so etcd3's
 * castGrpcError types them the same: a member that cannot be reached is UNAVAILABLE (14).
 *
 * What grpc-js checks, this checks too, each failing the one call and never the process: a
 * `grpc-message` that does not decode, an answer that is not exactly one whole message, an answer
 * over the size cap, and a member that stops answering pings while calls wait on it.
 */
import http2 from "node:http2";
import type { SecureContextOptions } from "node:tls";
import { status } from "@grpc/grpc-js";

/** A member as rpc.ts names it. */
export interface Member {
  /** `host:port` */
  host: string;
}

/** The TLS material of `https` members: PEM, as read from the files the settings name (tls.ts). */
export interface EtcdTls {
  /** The CA that signed the members' certificates (the system's CAs when absent). */
  ca?: Buffer;
  /** This client's certificate and key, for members that ask for one (etcd's --client-cert-auth). */
  cert?: Buffer;
  key?: Buffer;
}

export interface H2Options {
  /** Members are reached over TLS (`https`); `tls` is the material (system CAs when absent). */
  secure?: boolean;
  tls?: EtcdTls;
  /** The largest answer accepted, in bytes: beyond it the call fails (RESOURCE_EXHAUSTED). */
  maxAnswerBytes?: number;
  /** While calls wait on a session that said nothing for this long, it is pinged. */
  keepaliveMs?: number;
  /** A ping unanswered this long ends the session and its calls (UNAVAILABLE). */
  keepaliveTimeoutMs?: number;
}

/** What grpc-js accepts by default is 4 MiB; the tree asks etcd3's channels for 64 MiB (client.ts). */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** As the grpc-js channels of client.ts: etcd refuses pings closer than its --grpc-keepalive-min-time (5 s). */
export const DEFAULT_KEEPALIVE_MS = 10_000;
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 5000;

type GrpcError = Error & { code: number; details: string };

/** An error as grpc-js makes it: etcd3's castGrpcError reads its message and code. */
export function grpcError(code: number, details: string): GrpcError {
  return Object.assign(new Error(`${code} ${status[code] ?? "UNKNOWN"}: ${details}`), {
    code,
    details,
  });
}

/** The HTTP status of an answer that is not gRPC, as gRPC maps it. */
function codeOfHttpStatus(http: number): number {
  if (http === 401) return status.UNAUTHENTICATED;
  if (http === 403) return status.PERMISSION_DENIED;
  if (http === 404 || http === 501) return status.UNIMPLEMENTED;
  if (http === 429 || http === 502 || http === 503 || http === 504) return status.UNAVAILABLE;
  return status.UNKNOWN;
}

/** A stream the member reset, as grpc-js reports one. */
function resetError(rst: number): GrpcError {
  const c = http2.constants;
  if (rst === c.NGHTTP2_REFUSED_STREAM) return grpcError(status.UNAVAILABLE, "Stream refused by server");
  if (rst === c.NGHTTP2_CANCEL) return grpcError(status.CANCELLED, "Call cancelled");
  if (rst === c.NGHTTP2_ENHANCE_YOUR_CALM)
    return grpcError(status.RESOURCE_EXHAUSTED, "Bandwidth exhausted or memory limit exceeded");
  if (rst === c.NGHTTP2_INADEQUATE_SECURITY)
    return grpcError(status.PERMISSION_DENIED, "Protocol not secure enough");
  const why = rst === c.NGHTTP2_INTERNAL_ERROR ? " (Internal server error)" : "";
  return grpcError(status.INTERNAL, `Received RST_STREAM with code ${rst}${why}`);
}

/** `grpc-message` is percent-encoded UTF-8; one that does not decode is kept as sent (as grpc-js does). */
function decodeGrpcMessage(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The one message of a unary answer: a 5-byte prefix (not compressed, its length), then exactly
 * that many bytes. Anything else is INTERNAL, as grpc-js fails a stream it cannot parse: a short
 * body would otherwise read as an empty message, which for a range is "nothing there".
 */
function messageOf(chunks: Buffer[], total: number): Buffer | GrpcError {
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  if (body.length < 5)
    return grpcError(status.INTERNAL, `a truncated gRPC answer: ${body.length} bytes, not even its prefix`);
  if (body[0] !== 0)
    return grpcError(status.INTERNAL, `a gRPC answer with flags ${body[0]} (compressed or malformed)`);
  const declared = body.readUInt32BE(1);
  if (body.length - 5 < declared)
    return grpcError(
      status.INTERNAL,
      `a truncated gRPC answer: its message declares ${declared} bytes, ${body.length - 5} arrived`,
    );
  if (body.length - 5 > declared)
    return grpcError(status.INTERNAL, "a gRPC answer of more than one message, where one was due");
  return body.subarray(5);
}

/** The state of one member's session: calls waiting on it, and whether it said anything lately. */
interface SessionState {
  session: http2.ClientHttp2Session;
  inFlight: number;
  heard: boolean;
  probe: NodeJS.Timeout | undefined;
}

export function createH2Transport(options: H2Options = {}) {
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const keepaliveMs = options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
  const keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS;
  const scheme = options.secure || options.tls ? "https" : "http";
  const tls: SecureContextOptions = { ...options.tls };
  const sessions = new Map<string, SessionState>();

  /**
   * Every keepaliveMs: a session with calls waiting and no word from its member since the last
   * tick is pinged; without an answer within keepaliveTimeoutMs it is destroyed, failing its calls
   * as UNAVAILABLE (which the breaker counts, so the next call goes to another member). Only
   * quiet sessions with calls are pinged: etcd counts other pings against the client.
   */
  function tick(state: SessionState, host: string): void {
    const { session } = state;
    if (state.probe) return; // a ping is out: its answer or its timeout decides
    if (state.inFlight === 0 || state.heard) {
      state.heard = false;
      return;
    }
    const dead = grpcError(
      status.UNAVAILABLE,
      `etcd member ${host} did not answer a keepalive ping within ${keepaliveTimeoutMs} ms`,
    );
    state.probe = setTimeout(() => {
      state.probe = undefined;
      if (!state.heard) session.destroy(dead);
    }, keepaliveTimeoutMs);
    state.probe.unref();
    // Before its socket connects a session cannot ping: connecting in time is its answer then.
    if (session.connecting) session.once("connect", () => ping(state));
    else ping(state);
  }

  function ping(state: SessionState): void {
    if (state.session.destroyed) return;
    state.session.ping((err) => {
      if (err) return; // cancelled with its session: the session's own end fails the calls
      state.heard = true;
      clearTimeout(state.probe);
      state.probe = undefined;
    });
  }

  function sessionOf(m: Member): SessionState {
    const key = m.host;
    const open = sessions.get(key);
    if (open && !open.session.closed && !open.session.destroyed) return open;
    const session = http2.connect(`${scheme}://${m.host}`, { maxSessionMemory: 128, ...tls });
    const state: SessionState = { session, inFlight: 0, heard: false, probe: undefined };
    const timer = setInterval(() => tick(state, key), keepaliveMs);
    timer.unref();
    // A session that fails or ends is dropped; the next call connects again.
    const drop = () => {
      clearInterval(timer);
      clearTimeout(state.probe);
      if (sessions.get(key) === state) sessions.delete(key);
    };
    session.on("error", drop);
    session.on("close", drop);
    session.on("goaway", drop);
    // Only calls in flight keep the process alive.
    session.unref();
    sessions.set(key, state);
    return state;
  }

  return {
    /** One unary call of `path` on member `m`; `headers` carry the metadata (the auth token). */
    call(
      m: Member,
      path: string,
      message: Buffer,
      headers: http2.OutgoingHttpHeaders,
      timeoutMs: number,
    ): Promise<Buffer> {
      return new Promise((resolve, reject) => {
        let state: SessionState;
        let stream: http2.ClientHttp2Stream;
        try {
          state = sessionOf(m);
          stream = state.session.request({
            ...headers,
            ":method": "POST",
            ":path": path,
            "content-type": "application/grpc",
            te: "trailers",
            "grpc-timeout": `${Math.max(1, Math.ceil(timeoutMs))}m`,
          });
        } catch (err) {
          reject(grpcError(status.UNAVAILABLE, err instanceof Error ? err.message : String(err)));
          return;
        }
        const { session } = state;
        state.inFlight++;
        const chunks: Buffer[] = [];
        let received = 0;
        let code: number | undefined;
        let details = "";
        let httpStatus = 200;
        let settled = false;
        const settle = (err: Error | undefined, body?: Buffer) => {
          if (settled) return;
          settled = true;
          state.inFlight--;
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(body!);
        };
        const timer = setTimeout(() => {
          settle(grpcError(status.DEADLINE_EXCEEDED, "Deadline exceeded"));
          // A member that stopped answering may be gone without a word: the next call connects
          // again, as etcd3 resets its own connections on this error.
          session.destroy();
        }, timeoutMs);
        const readStatus = (h: http2.IncomingHttpHeaders) => {
          const s = h["grpc-status"];
          if (s === undefined) return;
          code = Number(s);
          const m = h["grpc-message"];
          details = typeof m === "string" ? decodeGrpcMessage(m) : "";
        };
        stream.on("response", (h) => {
          state.heard = true;
          httpStatus = Number(h[":status"] ?? 200);
          readStatus(h); // a trailers-only answer: the status comes with the headers
        });
        stream.on("trailers", readStatus);
        const overCap = (size: number) => {
          settle(
            grpcError(
              status.RESOURCE_EXHAUSTED,
              `etcd's answer to ${path} is ${size} bytes, over the cap of ${maxAnswerBytes}: ask for less (a smaller range or limit), or raise the cap (maxAnswerBytes)`,
            ),
          );
          stream.close(http2.constants.NGHTTP2_CANCEL);
        };
        stream.on("data", (c: Buffer) => {
          if (settled) return;
          const before = received;
          received += c.length;
          chunks.push(c);
          // The prefix declares the message's length: one over the cap is refused before it arrives.
          if (before < 5 && received >= 5) {
            const declared = (chunks.length === 1 ? c : Buffer.concat(chunks)).readUInt32BE(1);
            if (declared > maxAnswerBytes) return overCap(declared);
          }
          if (received > maxAnswerBytes + 5) overCap(received - 5);
        });
        stream.on("end", () => {
          // Without a status the stream was reset or cut: its close says which.
          if (code === undefined) return;
          if (code !== status.OK) return settle(grpcError(code, details));
          const answer = messageOf(chunks, received);
          if ("code" in answer) settle(answer);
          else settle(undefined, answer);
        });
        stream.on("error", (err: Error & { code?: unknown }) => {
          // The member reset this stream (RST_STREAM); any other error is the session's, or the socket's.
          const rst = err.code === "ERR_HTTP2_STREAM_ERROR" ? stream.rstCode : undefined;
          settle(rst ? resetError(rst) : grpcError(status.UNAVAILABLE, describeFailure(err, m.host)));
        });
        // Every stream closes, most after their answer: the error (and its stack) is made only
        // for one that closed before it.
        stream.on("close", () => {
          if (settled) return;
          if (stream.readableEnded) {
            const guess = httpStatus === 200 ? status.UNKNOWN : codeOfHttpStatus(httpStatus);
            return settle(grpcError(guess, `no gRPC status in an HTTP ${httpStatus} answer`));
          }
          settle(grpcError(status.UNAVAILABLE, "the stream closed before its answer"));
        });
        const framed = Buffer.allocUnsafe(5 + message.length);
        framed[0] = 0;
        framed.writeUInt32BE(message.length, 1);
        message.copy(framed, 5);
        stream.end(framed);
      });
    },

    close(): void {
      for (const s of sessions.values()) s.session.close();
      sessions.clear();
    },
  };
}

/** Node's TLS failures say what is wrong but not what to do: the settings that fix them are ours. */
const TLS_HINTS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: "give the CA that signed it (BYTESEEK_ETCD_CA)",
  SELF_SIGNED_CERT_IN_CHAIN: "give the CA that signed it (BYTESEEK_ETCD_CA)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "give the CA that signed it (BYTESEEK_ETCD_CA)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "give the CA that signed it (BYTESEEK_ETCD_CA)",
  CERT_HAS_EXPIRED: "renew the member's certificate",
  ERR_TLS_CERT_ALTNAME_INVALID: "name the member as its certificate does, or reissue the certificate",
};

function describeFailure(failure: Error & { code?: unknown }, host: string): string {
  // A stream waiting for its session is cancelled when the session fails: the cause is the session's.
  const err = (
    failure.code === "ERR_HTTP2_STREAM_CANCEL" && failure.cause instanceof Error ? failure.cause : failure
  ) as Error & {
    code?: unknown;
  };
  const hint = typeof err.code === "string" ? TLS_HINTS[err.code] : undefined;
  if (hint) return `etcd member ${host}'s TLS certificate was refused (${err.message}): ${hint}`;
  if (err.code === "ERR_SSL_WRONG_VERSION_NUMBER" || err.code === "EPROTO")
    return `etcd member ${host} does not speak TLS as expected (${err.message}): check https:// against the member's --listen-client-urls`;
  return failure.message;
}

export type H2Transport = ReturnType<typeof createH2Transport>;
