/**
 * Unary gRPC calls written on a plain node:http2 session per etcd member: the request framed as
 * gRPC frames it (a 5-byte prefix, then the message), the answer's message read back, its status
 * from the trailers. grpc-js builds a call object, an interceptor chain, a filter stack and an
 * AsyncResource per call; at 13 writes a batch that was a sixth of byteseek's CPU per PUT on etcd
 * (bench/RESULTS.md). The member, its breaker, the auth token and the deadline are still chosen by
 * etcd3's pool and rpc.ts, as for its own calls; only the wire is ours. Errors come out as grpc-js
 * would make them (`<code> <NAME>: <details>`, with `code` and `details`), so etcd3's
 * castGrpcError types them the same: a member that cannot be reached is UNAVAILABLE (14).
 */
import http2 from "node:http2";
import { status } from "@grpc/grpc-js";

/** What rpc.ts knows of a member: etcd3's pool entry. */
export interface Member {
  /** `host:port` */
  host: string;
  channelCredentials: { _isSecure(): boolean };
}

/** An error as grpc-js makes it: etcd3's castGrpcError reads its message and code. */
function grpcError(code: number, details: string): Error & { code: number; details: string } {
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

export function createH2Transport() {
  const sessions = new Map<string, http2.ClientHttp2Session>();

  function sessionOf(m: Member): http2.ClientHttp2Session {
    const key = m.host;
    const open = sessions.get(key);
    if (open && !open.closed && !open.destroyed) return open;
    const url = `${m.channelCredentials._isSecure() ? "https" : "http"}://${m.host}`;
    const session = http2.connect(url, { maxSessionMemory: 128 });
    // A session that fails or ends is dropped; the next call connects again.
    const drop = () => {
      if (sessions.get(key) === session) sessions.delete(key);
    };
    session.on("error", drop);
    session.on("close", drop);
    session.on("goaway", drop);
    // Only calls in flight keep the process alive.
    session.unref();
    sessions.set(key, session);
    return session;
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
        let session: http2.ClientHttp2Session;
        try {
          session = sessionOf(m);
        } catch (err) {
          reject(grpcError(status.UNAVAILABLE, err instanceof Error ? err.message : String(err)));
          return;
        }
        const stream = session.request({
          ...headers,
          ":method": "POST",
          ":path": path,
          "content-type": "application/grpc",
          te: "trailers",
          "grpc-timeout": `${Math.max(1, Math.ceil(timeoutMs))}m`,
        });
        const chunks: Buffer[] = [];
        let code: number | undefined;
        let details = "";
        let httpStatus = 200;
        let settled = false;
        const settle = (err: Error | undefined, body?: Buffer) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(body!);
        };
        const timer = setTimeout(() => {
          settle(grpcError(status.DEADLINE_EXCEEDED, "Deadline exceeded"));
          // A member that stopped answering may be gone without a word (no keepalive here): the
          // next call connects again, as etcd3 resets its own connections on this error.
          session.destroy();
        }, timeoutMs);
        const readStatus = (h: http2.IncomingHttpHeaders) => {
          const s = h["grpc-status"];
          if (s === undefined) return;
          code = Number(s);
          const m = h["grpc-message"];
          details = typeof m === "string" ? decodeURIComponent(m) : "";
        };
        stream.on("response", (h) => {
          httpStatus = Number(h[":status"] ?? 200);
          readStatus(h); // a trailers-only answer: the status comes with the headers
        });
        stream.on("trailers", readStatus);
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          if (code === undefined) {
            const guess = httpStatus === 200 ? status.UNKNOWN : codeOfHttpStatus(httpStatus);
            return settle(grpcError(guess, `no gRPC status in an HTTP ${httpStatus} answer`));
          }
          if (code !== status.OK) return settle(grpcError(code, details));
          const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          // One message: a 5-byte prefix (not compressed, its length), then the message.
          if (body.length < 5 || body[0] !== 0)
            return settle(grpcError(status.INTERNAL, "a malformed gRPC answer"));
          settle(undefined, body.subarray(5, 5 + body.readUInt32BE(1)));
        });
        stream.on("error", (err) => settle(grpcError(status.UNAVAILABLE, err.message)));
        // Every stream closes, most after their answer: the error (and its stack) is made only
        // for one that closed before it.
        stream.on("close", () => {
          if (!settled) settle(grpcError(status.UNAVAILABLE, "the stream closed before its answer"));
        });
        const framed = Buffer.allocUnsafe(5 + message.length);
        framed[0] = 0;
        framed.writeUInt32BE(message.length, 1);
        message.copy(framed, 5);
        stream.end(framed);
      });
    },

    close(): void {
      for (const s of sessions.values()) s.close();
      sessions.clear();
    },
  };
}

export type H2Transport = ReturnType<typeof createH2Transport>;
