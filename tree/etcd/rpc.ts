/**
 * The etcd calls of the tree's hot paths (transactions, ranges, the watch stream), made with the
 * hand-written messages of wire.ts: etcd3's pool picks the member, skips one that failed
 * (client.ts's breaker) and holds the auth token, exactly as for its own calls; only the encoding
 * differs, and for unary calls the wire too (h2.ts: one plain HTTP/2 session per member instead of
 * grpc-js's call machinery). The watch stream stays on etcd3's grpc-js connection: one per process.
 * Errors come out as etcd3's (castGrpcError), so isEtcdFailure and isEtcdRefusal read them alike.
 *
 * A class, so bench/etcd-probe.ts can count the calls by wrapping its prototype's methods.
 */
import type { ClientDuplexStream } from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import { castGrpcError, type Etcd3, EtcdInvalidAuthTokenError, type ICallable } from "etcd3";
import { EtcdWireError } from "./errors.js";
import { createH2Transport, grpcError, type H2Options, type Member } from "./h2.js";
import {
  decodeRangeResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeRangeRequest,
  encodeTxnRequest,
  encodeWatchRequest,
  type RangeRequest,
  type RangeResponse,
  type TxnRequest,
  type TxnResponse,
  type WatchRequest,
  type WatchResponse,
} from "./wire.js";

export type WatchStream = ClientDuplexStream<WatchRequest, WatchResponse>;

/** What etcd3's pool offers past its ICallable type: the authenticator that holds the token. */
type Pool = ICallable<unknown> & { authenticator?: { invalidateMetadata(): void } };

export class EtcdRpc {
  readonly #pool: Pool;
  readonly #h2: ReturnType<typeof createH2Transport>;

  /** `wire`: how the unary calls' sessions reach the members (TLS, answer cap, keepalive). */
  constructor(client: Etcd3, wire: H2Options = {}) {
    this.#h2 = createH2Transport(wire);
    // etcd3 keeps its pool protected: it is the one that knows the members, their health and the token.
    this.#pool = (client as unknown as { pool: Pool }).pool;
  }

  txn(req: TxnRequest): Promise<TxnResponse> {
    return this.#unary("/etcdserverpb.KV/Txn", "txn", encodeTxnRequest, decodeTxnResponse, req);
  }

  range(req: RangeRequest): Promise<RangeResponse> {
    return this.#unary("/etcdserverpb.KV/Range", "range", encodeRangeRequest, decodeRangeResponse, req);
  }

  /** A new watch stream (its `error` is etcd3's markFailed's to see too, as for etcd3's own). */
  watch(): Promise<WatchStream> {
    const pool = this.#pool;
    return pool.withConnection("Watch", ({ resource, client, metadata }) => {
      const stream = client.makeBidiStreamRequest(
        "/etcdserverpb.Watch/Watch",
        encodeWatchRequest,
        decodeWatchResponse,
        metadata,
        this.#options("Watch", "watch", undefined, true),
      );
      stream.on("error", (err: Error) => stream.writable && pool.markFailed(resource, err));
      return stream;
    });
  }

  #options(service: "KV" | "Watch", method: "txn" | "range" | "watch", params: unknown, isStream: boolean) {
    const f = this.#pool.callOptionsFactory;
    // The context's params are etcd3's request objects; client.ts's factory only reads isStream.
    const context = { service, method, params, isStream } as Parameters<
      Exclude<typeof f, object | undefined>
    >[0];
    return (typeof f === "function" ? f(context) : f) ?? {};
  }

  async #unary<Req, Res>(
    path: string,
    method: "txn" | "range",
    encode: (req: Req) => Buffer,
    decode: (buf: Buffer) => Res,
    req: Req,
  ): Promise<Res> {
    const message = encode(req);
    const options = this.#options("KV", method, req, false) as { deadline?: number };
    const timeoutMs = options.deadline === undefined ? 5000 : options.deadline - Date.now();
    const call = async (member: Member, metadata: import("@grpc/grpc-js").Metadata) => {
      try {
        return decode(await this.#h2.call(member, path, message, metadata.toHttp2Headers(), timeoutMs));
      } catch (err) {
        // An answer that does not read is the call's failure, INTERNAL as grpc-js makes it.
        if (err instanceof EtcdWireError)
          throw castGrpcError(
            grpcError(status.INTERNAL, `etcd's answer to ${path} (${err.code}): ${err.message}`),
          );
        throw castGrpcError(err as Error);
      }
    };
    const viaPool = () =>
      this.#pool.withConnection("KV", ({ resource, metadata }) =>
        call(resource as unknown as Member, metadata),
      );
    try {
      return await viaPool();
    } catch (err) {
      // A token that expired: etcd3 fetches a new one and sends the call again (nothing was applied).
      if (!(err instanceof EtcdInvalidAuthTokenError) || !this.#pool.authenticator) throw err;
      this.#pool.authenticator.invalidateMetadata();
      return viaPool();
    }
  }

  /** Closes the unary calls' sessions (the pool's connections are etcd3's to close). */
  close(): void {
    this.#h2.close();
  }
}
