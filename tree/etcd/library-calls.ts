/**
 * The etcd lane's reference implementation (calls.ts): the tree's transactions, ranges and watch
 * streams through etcd3's public `KVClient` and `WatchClient` (`client.kv`, `client.watchClient`),
 * so etcd3's pool picks the member, its breaker (client.ts) skips a failed one, its authenticator
 * holds the token and protobufjs writes and reads the messages. `BYTESEEK_FAST=0` selects it.
 *
 * It speaks wire.ts's messages as the fast lane does: requests are translated into etcd3's shapes
 * (strings become UTF-8 bytes: protobufjs would read a string as base64), and answers back, every
 * 64-bit number read exactly (beyond 2^53 - 1 the call fails, as wire.ts refuses it), lease ids as
 * bigints, fields the tree does not read left out.
 */
import { EventEmitter } from "node:events";
import type {
  Etcd3,
  IDuplexStream,
  IKeyValue,
  IRangeRequest,
  IRangeResponse,
  IRequestOp,
  IResponseHeader,
  ITxnRequest,
  ITxnResponse,
  IWatchRequest,
  IWatchResponse,
} from "etcd3";
import { type EtcdCalls, unreadableAnswer, type WatchStream } from "./calls.js";
import { int64RangeError } from "./errors.js";
import type {
  Bytes,
  KeyValue,
  RangeRequest,
  RangeResponse,
  RequestOp,
  ResponseHeader,
  ResponseOp,
  TxnRequest,
  TxnResponse,
  WatchRequest,
  WatchResponse,
} from "./wire.js";

const bytes = (b: Bytes): Buffer => (typeof b === "string" ? Buffer.from(b, "utf8") : b);
const optBytes = (b: Bytes | undefined) => (b === undefined ? undefined : bytes(b));

// ---- requests: wire.ts's shapes in etcd3's ----

function rangeRequest(r: RangeRequest): IRangeRequest {
  return {
    key: bytes(r.key),
    ...(r.range_end === undefined ? {} : { range_end: bytes(r.range_end) }),
    ...(r.limit === undefined ? {} : { limit: r.limit }),
    ...(r.revision === undefined ? {} : { revision: r.revision }),
    ...(r.keys_only ? { keys_only: true } : {}),
  };
}

function requestOp(op: RequestOp): IRequestOp {
  if ("request_put" in op)
    return { request_put: { key: bytes(op.request_put.key), value: bytes(op.request_put.value) } };
  if ("request_delete_range" in op) {
    const d = op.request_delete_range;
    return {
      request_delete_range: {
        key: bytes(d.key),
        ...(d.range_end === undefined ? {} : { range_end: bytes(d.range_end) }),
      },
    };
  }
  if ("request_range" in op) return { request_range: rangeRequest(op.request_range) };
  return { request_txn: txnRequest(op.request_txn) };
}

function txnRequest(t: TxnRequest): ITxnRequest {
  return {
    compare: (t.compare ?? []).map((c) => ({
      key: bytes(c.key),
      ...(c.range_end === undefined ? {} : { range_end: optBytes(c.range_end) as Buffer }),
      result: c.result,
      target: c.target,
      ...(c.target === "Mod" ? { mod_revision: c.mod_revision ?? 0 } : { version: c.version ?? 0 }),
    })),
    success: (t.success ?? []).map(requestOp),
    failure: (t.failure ?? []).map(requestOp),
  };
}

function watchRequest(req: WatchRequest): IWatchRequest {
  if ("progress_request" in req) return { progress_request: {} };
  const c = req.create_request;
  return {
    create_request: {
      key: c.key,
      ...(c.range_end === undefined ? {} : { range_end: c.range_end }),
      ...(c.start_revision === undefined ? {} : { start_revision: c.start_revision }),
    },
  };
}

// ---- answers: etcd3's shapes in wire.ts's, every number exact ----

/** An int64 etcd3 gives as decimal text, as a number: exact, or refused (as wire.ts refuses it). */
function int53(text: string | number | undefined, field: string): number {
  if (text === undefined) return 0;
  const n = BigInt(text);
  if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER)) throw int64RangeError(field);
  return Number(n);
}

const EMPTY = Buffer.alloc(0);

function header(h: IResponseHeader | null | undefined): ResponseHeader {
  return { revision: h ? int53(h.revision, "revision") : 0 };
}

function keyValue(kv: IKeyValue): KeyValue {
  const lease = kv.lease === undefined ? 0n : BigInt.asIntN(64, BigInt(kv.lease));
  return {
    key: kv.key ?? EMPTY,
    value: kv.value ?? EMPTY,
    create_revision: int53(kv.create_revision, "create_revision"),
    mod_revision: int53(kv.mod_revision, "mod_revision"),
    version: int53(kv.version, "version"),
    ...(lease === 0n ? {} : { lease }),
  };
}

function rangeResponse(r: IRangeResponse): RangeResponse {
  return {
    header: header(r.header),
    kvs: (r.kvs ?? []).map(keyValue),
    more: r.more === true,
    count: int53(r.count, "count"),
  };
}

function responseOp(op: ITxnResponse["responses"][number]): ResponseOp {
  const out: ResponseOp = {};
  // etcd3 reads messages with oneofs: the one member sent is set, the others absent or null.
  if (op.response_range) out.response_range = rangeResponse(op.response_range);
  if (op.response_put) {
    // A previous value is read for its numbers' sake (the fast lane reads it too), not kept.
    if (op.response_put.prev_kv) keyValue(op.response_put.prev_kv);
    out.response_put = { header: header(op.response_put.header) };
  }
  if (op.response_delete_range) {
    const d = op.response_delete_range;
    for (const kv of d.prev_kvs ?? []) keyValue(kv);
    out.response_delete_range = { header: header(d.header), deleted: int53(d.deleted, "deleted count") };
  }
  if (op.response_txn) out.response_txn = txnResponse(op.response_txn);
  return out;
}

function txnResponse(t: ITxnResponse): TxnResponse {
  return {
    header: header(t.header),
    succeeded: t.succeeded === true,
    responses: (t.responses ?? []).map(responseOp),
  };
}

function watchResponse(w: IWatchResponse): WatchResponse {
  return {
    header: header(w.header),
    watch_id: int53(w.watch_id, "watch id"),
    created: w.created === true,
    canceled: w.canceled === true,
    compact_revision: int53(w.compact_revision, "compact_revision"),
    cancel_reason: w.cancel_reason ?? "",
    events: (w.events ?? []).map((ev) => {
      if (ev.prev_kv) keyValue(ev.prev_kv);
      return {
        type: ev.type === "Delete" ? "Delete" : "Put",
        kv: ev.kv
          ? keyValue(ev.kv)
          : { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 },
      };
    }),
  };
}

// ---- the calls ----

const WATCH = "/etcdserverpb.Watch/Watch";

/**
 * etcd3's watch stream, speaking wire.ts's messages. An answer that does not read exactly fails the
 * stream (as the fast lane's decoder fails it) and cancels etcd3's.
 */
class LibraryWatchStream extends EventEmitter implements WatchStream {
  readonly #inner: IDuplexStream<IWatchRequest, IWatchResponse>;

  constructor(inner: IDuplexStream<IWatchRequest, IWatchResponse>) {
    super();
    this.#inner = inner;
    let failed = false;
    inner.on("data", (res: IWatchResponse) => {
      if (failed) return;
      let read: WatchResponse;
      try {
        read = watchResponse(res);
      } catch (err) {
        failed = true;
        this.emit("error", unreadableAnswer(WATCH, err));
        inner.cancel();
        return;
      }
      this.emit("data", read);
    });
    inner.on("error", (err: Error) => {
      if (!failed) this.emit("error", err);
    });
    inner.on("end", () => this.emit("end"));
  }

  write(req: WatchRequest): boolean {
    this.#inner.write(watchRequest(req));
    return true;
  }

  cancel(): void {
    this.#inner.cancel();
  }
}

/** The reference lane over `client` (its deadlines, breaker and member choice are connectEtcd's). */
export function createLibraryCalls(client: Etcd3): EtcdCalls {
  const kv = client.kv;
  const watchClient = client.watchClient;
  return {
    async txn(req) {
      const res = await kv.txn(txnRequest(req));
      try {
        return txnResponse(res);
      } catch (err) {
        throw unreadableAnswer("/etcdserverpb.KV/Txn", err);
      }
    },
    async range(req) {
      const res = await kv.range(rangeRequest(req));
      try {
        return rangeResponse(res);
      } catch (err) {
        throw unreadableAnswer("/etcdserverpb.KV/Range", err);
      }
    },
    async watch() {
      return new LibraryWatchStream(await watchClient.watch());
    },
    // The client is the tree's: closed with it, not here.
    close() {},
  };
}
