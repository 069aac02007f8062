/**
 * The etcd calls of the tree's hot paths (transactions, ranges, the watch stream: calls.ts), the
 * fast lane: made with the hand-written messages of wire.ts over connections this lane owns: the members are the tree's
 * endpoints, a member that fails a call is skipped for a moment (the next call goes to another, as
 * client.ts's breaker does for etcd3's own calls), TLS and keepalive are the settings' (h2.ts for
 * the unary calls, one grpc-js channel per member for the watch stream). Nothing here reaches into
 * etcd3 or grpc-js past their public API. With a user (auth.ts: BYTESEEK_ETCD_USER), every call
 * carries the token it is given for it, asked for at the first call and again when etcd says it is
 * no longer valid (a refused call is sent once more: etcd refuses it before applying anything).
 * Errors come out as etcd3's (castGrpcError), so isEtcdFailure and isEtcdRefusal read them alike.
 *
 * A class, so bench/etcd-probe.ts can count the calls by wrapping its prototype's methods.
 */
import { type ChannelCredentials, Client, credentials, Metadata } from "@grpc/grpc-js";
import { castGrpcError, EtcdInvalidAuthTokenError, GRPCCancelledError, isRecoverableError } from "etcd3";
import {
  AUTHENTICATE,
  decodeAuthenticateResponse,
  type EtcdAuth,
  encodeAuthenticateRequest,
} from "./auth.js";
import { type EtcdCalls, unreadableAnswer, type WatchStream } from "./calls.js";
import {
  channelOptions,
  type EtcdClientOptions,
  MemberSkipped,
  memberUrls,
  SKIP_MS,
  wireOptions,
} from "./client.js";
import { createH2Transport, type H2Transport } from "./h2.js";
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
} from "./wire.js";

/** One etcd member: where it is, until when it is skipped, and its watch channel once opened. */
interface MemberState {
  /** `host:port` */
  host: string;
  skipUntil: number;
  watch: Client | undefined;
}

/** The etcd lane's fast implementation (calls.ts; the reference is library-calls.ts). */
export class EtcdRpc implements EtcdCalls {
  readonly #members: MemberState[];
  readonly #h2: H2Transport;
  readonly #timeoutMs: number;
  readonly #credentials: ChannelCredentials;
  readonly #channelOptions: ReturnType<typeof channelOptions>;
  readonly #auth: EtcdAuth | undefined;
  /** The token every call carries when etcd has auth: asked for once, again after etcd refuses it. */
  #token: Promise<string> | undefined;

  /** The members and how to reach them: the options the tree's etcd3 client is made with. */
  constructor(options: EtcdClientOptions) {
    const urls = memberUrls(options.endpoints, options.tls);
    this.#members = urls.map((url) => ({
      host: url.replace(/^https?:\/\//i, ""),
      skipUntil: 0,
      watch: undefined,
    }));
    this.#h2 = createH2Transport(wireOptions(options));
    this.#timeoutMs = options.callTimeoutMs ?? 5000;
    const tls = options.tls;
    this.#credentials = urls[0]?.startsWith("https:")
      ? credentials.createSsl(tls?.ca ?? null, tls?.key ?? null, tls?.cert ?? null)
      : credentials.createInsecure();
    this.#channelOptions = channelOptions(options);
    this.#auth = options.auth;
  }

  /** The `token` metadata of a call on `m` (none without a user), logging in through `m` first if needed. */
  async #authHeaders(m: MemberState): Promise<{ token: string } | Record<string, never>> {
    const auth = this.#auth;
    if (auth === undefined) return {};
    this.#token ??= this.#h2
      .call(m, AUTHENTICATE, encodeAuthenticateRequest(auth), {}, this.#timeoutMs)
      .then(decodeAuthenticateResponse, (err: Error) => {
        throw castGrpcError(err);
      })
      .catch((err: unknown) => {
        this.#token = undefined;
        throw unreadableAnswer(AUTHENTICATE, err);
      });
    return { token: await this.#token };
  }

  /** etcd no longer takes `token` (it expired, or etcd restarted): the next call asks for another. */
  #tokenRefused(err: Error, token: string | undefined): boolean {
    if (!(err instanceof EtcdInvalidAuthTokenError) || token === undefined) return false;
    void this.#token?.then((current) => {
      if (current === token) this.#token = undefined;
    });
    return true;
  }

  txn(req: TxnRequest): Promise<TxnResponse> {
    return this.#unary("/etcdserverpb.KV/Txn", encodeTxnRequest, decodeTxnResponse, req);
  }

  range(req: RangeRequest): Promise<RangeResponse> {
    return this.#unary("/etcdserverpb.KV/Range", encodeRangeRequest, decodeRangeResponse, req);
  }

  /** A new watch stream on a member not skipped; its failure makes that member skipped too. */
  watch(): Promise<WatchStream> {
    return this.#onMember(async (m) => {
      const { token } = await this.#authHeaders(m);
      const metadata = new Metadata();
      if (token !== undefined) metadata.set("token", token);
      m.watch ??= new Client(m.host, this.#credentials, this.#channelOptions);
      const stream = m.watch.makeBidiStreamRequest(
        "/etcdserverpb.Watch/Watch",
        encodeWatchRequest,
        decodeWatchResponse,
        metadata,
        {},
      );
      stream.on("error", (err: Error) => {
        const cast = castGrpcError(err);
        // The tree opens another stream, which then logs in again.
        this.#tokenRefused(cast, token);
        // A stream ended by its own cancel() says nothing of the member.
        if (stream.writable) this.#failed(m, cast);
      });
      return stream;
    });
  }

  /**
   * Runs `call` on one member, starting from a random one and passing over those skipped; a
   * call that fails as a connection failure makes its member skipped for SKIP_MS and fails (the
   * tree decides whether to retry: a transaction sent again blindly could be applied twice).
   */
  async #onMember<T>(call: (m: MemberState) => Promise<T>): Promise<T> {
    const members = this.#members;
    const start = Math.floor(Math.random() * members.length);
    const now = Date.now();
    for (let i = 0; i < members.length; i++) {
      const m = members[(start + i) % members.length]!;
      if (now < m.skipUntil) continue;
      try {
        return await call(m);
      } catch (err) {
        if (err instanceof Error) this.#failed(m, err);
        throw err;
      }
    }
    throw new MemberSkipped(
      "every etcd member is skipped after a connection failure; calls try them again shortly",
    );
  }

  /** A failure that is the member's (not a refusal, not our own cancel) skips it, its watch channel dropped. */
  #failed(m: MemberState, err: Error): void {
    if (!isRecoverableError(err) || err instanceof GRPCCancelledError) return;
    m.skipUntil = Date.now() + SKIP_MS;
    m.watch?.close();
    m.watch = undefined;
  }

  #unary<Req, Res>(
    path: string,
    encode: (req: Req) => Buffer,
    decode: (buf: Buffer) => Res,
    req: Req,
  ): Promise<Res> {
    const message = encode(req);
    return this.#onMember(async (m) => {
      let answer: Buffer;
      for (let attempt = 0; ; attempt++) {
        const headers = await this.#authHeaders(m);
        try {
          answer = await this.#h2.call(m, path, message, headers, this.#timeoutMs);
          break;
        } catch (err) {
          const cast = castGrpcError(err as Error);
          // Refused before anything was applied: sent once more with a new token.
          if (attempt === 0 && this.#tokenRefused(cast, headers.token)) continue;
          throw cast;
        }
      }
      try {
        return decode(answer);
      } catch (err) {
        throw unreadableAnswer(path, err);
      }
    });
  }

  /** Closes the unary calls' sessions and the watch channels. */
  close(): void {
    this.#h2.close();
    for (const m of this.#members) {
      m.watch?.close();
      m.watch = undefined;
    }
  }
}
