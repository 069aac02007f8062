/**
 * The etcd wire's error catalogue: what wire.ts raises when an answer from etcd cannot be read
 * exactly. rpc.ts turns each into the call's gRPC-style error (INTERNAL, which the breaker counts),
 * as grpc-js turns a message it cannot parse into one; nothing here reaches a tree caller as is.
 */
import { CodedError } from "../errors.js";

export const ETCD_WIRE_ERROR_CODES = [
  /** The bytes are not the protobuf message they should be: truncated, mis-typed or out of bounds. */
  "ETCD_WIRE_MALFORMED",
  /**
   * A revision, version or count beyond 2^53 - 1 (or negative): the tree's numbers cannot hold it
   * exactly, and a rounded revision would compare wrong, so the answer is refused instead.
   */
  "ETCD_WIRE_INT64_RANGE",
] as const;
export type EtcdWireErrorCode = (typeof ETCD_WIRE_ERROR_CODES)[number];

export class EtcdWireError extends CodedError<EtcdWireErrorCode> {
  override readonly name = "EtcdWireError";
}

/** A 64-bit number of etcd's answer that the tree's numbers cannot hold exactly (both lanes say it alike). */
export function int64RangeError(field: string): EtcdWireError {
  return new EtcdWireError(
    "ETCD_WIRE_INT64_RANGE",
    `etcd answered a ${field} outside 0 .. 2^53 - 1, which the tree cannot hold exactly`,
  );
}
