/**
 * The etcd calls the tree's hot paths make — a transaction, a range, a watch stream — as one small
 * interface with two implementations (tree/fast-lanes.ts): `EtcdRpc` (rpc.ts), the fast lane, in
 * hand-written protobuf on HTTP/2 sessions of its own; and `createLibraryCalls` (library-calls.ts),
 * the reference lane, through etcd3's public KVClient and WatchClient. Both take and give the
 * messages of wire.ts and fail as etcd3 fails (castGrpcError), so the tree cannot tell them apart;
 * the tree's conformance suite runs on each (`BYTESEEK_FAST=0`).
 */
import { status } from "@grpc/grpc-js";
import { castGrpcError } from "etcd3";
import { EtcdWireError } from "./errors.js";
import { grpcError } from "./h2.js";
import type {
  RangeRequest,
  RangeResponse,
  TxnRequest,
  TxnResponse,
  WatchRequest,
  WatchResponse,
} from "./wire.js";

/** A watch stream as the tree uses it: requests written, answers, its failure and its end heard. */
export interface WatchStream {
  on(event: "data", listener: (res: WatchResponse) => void): this;
  on(event: "error", listener: (err: Error) => void): this;
  on(event: "end", listener: () => void): this;
  write(req: WatchRequest): boolean;
  /** Ends the stream from this side (an error with CANCELLED follows, as grpc-js emits one). */
  cancel(): void;
}

export interface EtcdCalls {
  txn(req: TxnRequest): Promise<TxnResponse>;
  range(req: RangeRequest): Promise<RangeResponse>;
  /** A new watch stream (on a member not skipped after a connection failure). */
  watch(): Promise<WatchStream>;
  /** Ends what this lane opened (not a client it was handed). */
  close(): void;
}

/**
 * An answer that does not read exactly (wire.ts's EtcdWireError) is the call's failure, INTERNAL as
 * grpc-js makes it for a message it cannot parse; anything else is passed on as it is.
 */
export function unreadableAnswer(path: string, err: unknown): unknown {
  if (!(err instanceof EtcdWireError)) return err;
  return castGrpcError(grpcError(status.INTERNAL, `etcd's answer to ${path} (${err.code}): ${err.message}`));
}
