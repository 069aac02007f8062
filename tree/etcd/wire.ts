/**
 * etcd's KV and Watch messages in protobuf, written by hand for the fields the tree uses. etcd3
 * goes through protobufjs's generic path: every request built as an object, copied by fromObject
 * (each revision parsed from a string into a Long), then encoded; every answer decoded, then
 * copied again by toObject with each 64-bit field turned into a string (the header's cluster and
 * member ids are full 64-bit numbers, the slowest to print). A tree write pays that for its
 * transaction and again for its watch event. Here a request is encoded straight from its fields
 * into one buffer, and an answer decoded into the fields read: revisions as numbers (exact, and
 * refused beyond 2^53 - 1 rather than rounded), lease ids as bigints, keys and values as views of
 * the received bytes, the ids not at all.
 *
 * Field numbers are those of etcd's api/etcdserverpb/rpc.proto and api/mvccpb/kv.proto;
 * test/etcd/wire.test.ts checks both directions against protobufjs reading etcd3's own copy of
 * those files. Fields not listed are skipped when read and never written. Over 400 lines: the
 * messages' shapes, how they are written and how they are read are one description of the same
 * fields and field numbers, read side by side against the .proto.
 */

import { EtcdWireError, int64RangeError } from "./errors.js";

// ---- requests ----

/** A bytes field: a string is written as its UTF-8 (no Buffer made for it first). */
export type Bytes = Buffer | string;

export interface Compare {
  key: Bytes;
  /** Compares every key in [key, range_end). */
  range_end?: Bytes;
  result: "Equal" | "Less";
  target: "Mod" | "Version";
  /** For target Mod. */
  mod_revision?: number;
  /** For target Version. */
  version?: number;
}

export interface RangeRequest {
  key: Bytes;
  range_end?: Bytes;
  limit?: number;
  revision?: number;
  keys_only?: boolean;
}

export interface PutRequest {
  key: Bytes;
  value: Bytes;
}

export interface DeleteRangeRequest {
  key: Bytes;
  range_end?: Bytes;
}

export type RequestOp =
  | { request_range: RangeRequest }
  | { request_put: PutRequest }
  | { request_delete_range: DeleteRangeRequest }
  | { request_txn: TxnRequest };

export interface TxnRequest {
  compare?: Compare[];
  success?: RequestOp[];
  failure?: RequestOp[];
}

export type WatchRequest =
  | { create_request: { key: Buffer; range_end?: Buffer; start_revision?: number } }
  | { progress_request: Record<string, never> };

// ---- answers ----

export interface ResponseHeader {
  revision: number;
}

export interface KeyValue {
  key: Buffer;
  value: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
  /** The lease the key is attached to, when it is: lease ids use all 64 bits, so a bigint. */
  lease?: bigint;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: KeyValue[];
  more: boolean;
  count: number;
}

export interface ResponseOp {
  response_range?: RangeResponse;
  response_put?: { header: ResponseHeader };
  response_delete_range?: { header: ResponseHeader; deleted: number };
  response_txn?: TxnResponse;
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface WatchEvent {
  type: "Put" | "Delete";
  kv: KeyValue;
}

export interface WatchResponse {
  header: ResponseHeader;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  events: WatchEvent[];
}

// ---- writing: sizes first, then one buffer filled in the same order ----

const VARINT = 0;
const LEN = 2;

function varintSize(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a revision, count or length: ${n}`);
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** A field's tag plus its length-prefixed content of `n` bytes (fields here are numbered < 16, or 64). */
const lenField = (field: number, n: number) => (field < 16 ? 1 : 2) + varintSize(n) + n;
const numField = (n: number | undefined) => (n === undefined || n === 0 ? 0 : 1 + varintSize(n));
export const byteLength = (b: Bytes) => (typeof b === "string" ? Buffer.byteLength(b) : b.length);
const bytesField = (field: number, b: Bytes | undefined) =>
  b === undefined ? 0 : lenField(field, byteLength(b));

function compareSize(c: Compare): number {
  const value = c.target === "Mod" ? c.mod_revision : c.version;
  return (
    (c.result === "Equal" ? 0 : 2) + // result, target: enums, 0 left out
    (c.target === "Version" ? 0 : 2) +
    bytesField(3, c.key) +
    1 +
    varintSize(value ?? 0) + // the union's member is written even when 0: which one is set matters
    bytesField(64, c.range_end)
  );
}

function rangeSize(r: RangeRequest): number {
  return (
    bytesField(1, r.key) +
    bytesField(2, r.range_end) +
    numField(r.limit) +
    numField(r.revision) +
    (r.keys_only ? 2 : 0)
  );
}

/** A RequestOp's content: its one member, tag and length included. */
function opSize(op: RequestOp): number {
  if ("request_put" in op) {
    const p = op.request_put;
    return lenField(2, bytesField(1, p.key) + bytesField(2, p.value));
  }
  if ("request_delete_range" in op) {
    const d = op.request_delete_range;
    return lenField(3, bytesField(1, d.key) + bytesField(2, d.range_end));
  }
  if ("request_range" in op) return lenField(1, rangeSize(op.request_range));
  return lenField(4, txnSize(op.request_txn));
}

function txnSize(t: TxnRequest): number {
  let n = 0;
  for (const c of t.compare ?? []) n += lenField(1, compareSize(c));
  for (const op of t.success ?? []) n += lenField(2, opSize(op));
  for (const op of t.failure ?? []) n += lenField(3, opSize(op));
  return n;
}

class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(n: number): void {
    const buf = this.buf;
    while (n >= 128) {
      buf[this.pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    buf[this.pos++] = n;
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  /** A length-delimited field's tag and length; its content follows. */
  open(field: number, n: number): void {
    this.tag(field, LEN);
    this.varint(n);
  }

  bytes(field: number, b: Bytes | undefined): void {
    if (b === undefined) return;
    if (typeof b === "string") {
      this.open(field, Buffer.byteLength(b));
      this.pos += this.buf.write(b, this.pos);
    } else {
      this.open(field, b.length);
      this.pos += b.copy(this.buf, this.pos);
    }
  }

  num(field: number, n: number | undefined): void {
    if (n === undefined || n === 0) return;
    this.tag(field, VARINT);
    this.varint(n);
  }

  compare(c: Compare): void {
    if (c.result !== "Equal") this.num(1, 2);
    if (c.target !== "Version") this.num(2, 2);
    this.bytes(3, c.key);
    if (c.target === "Mod") this.tag(6, VARINT);
    else this.tag(4, VARINT);
    this.varint((c.target === "Mod" ? c.mod_revision : c.version) ?? 0);
    this.bytes(64, c.range_end);
  }

  range(r: RangeRequest): void {
    this.bytes(1, r.key);
    this.bytes(2, r.range_end);
    this.num(3, r.limit);
    this.num(4, r.revision);
    if (r.keys_only) this.num(8, 1);
  }

  op(op: RequestOp, field: number): void {
    if ("request_txn" in op) {
      // Sized once here rather than once by opSize and again for its own field.
      const inner = txnSize(op.request_txn);
      this.open(field, lenField(4, inner));
      this.open(4, inner);
      this.txn(op.request_txn);
      return;
    }
    this.open(field, opSize(op));
    if ("request_put" in op) {
      const p = op.request_put;
      this.open(2, bytesField(1, p.key) + bytesField(2, p.value));
      this.bytes(1, p.key);
      this.bytes(2, p.value);
    } else if ("request_delete_range" in op) {
      const d = op.request_delete_range;
      this.open(3, bytesField(1, d.key) + bytesField(2, d.range_end));
      this.bytes(1, d.key);
      this.bytes(2, d.range_end);
    } else {
      this.open(1, rangeSize(op.request_range));
      this.range(op.request_range);
    }
  }

  txn(t: TxnRequest): void {
    for (const c of t.compare ?? []) {
      this.open(1, compareSize(c));
      this.compare(c);
    }
    for (const op of t.success ?? []) this.op(op, 2);
    for (const op of t.failure ?? []) this.op(op, 3);
  }
}

function written(w: Writer): Buffer {
  if (w.pos !== w.buf.length)
    throw new Error(`protobuf size mismatch: wrote ${w.pos} of ${w.buf.length} bytes`);
  return w.buf;
}

export function encodeTxnRequest(t: TxnRequest): Buffer {
  const w = new Writer(Buffer.allocUnsafe(txnSize(t)));
  w.txn(t);
  return written(w);
}

export function encodeRangeRequest(r: RangeRequest): Buffer {
  const w = new Writer(Buffer.allocUnsafe(rangeSize(r)));
  w.range(r);
  return written(w);
}

export function encodeWatchRequest(req: WatchRequest): Buffer {
  if ("progress_request" in req) return Buffer.from([(3 << 3) | LEN, 0]);
  const c = req.create_request;
  const size = bytesField(1, c.key) + bytesField(2, c.range_end) + numField(c.start_revision);
  const w = new Writer(Buffer.allocUnsafe(lenField(1, size)));
  w.open(1, size);
  w.bytes(1, c.key);
  w.bytes(2, c.range_end);
  w.num(3, c.start_revision);
  return written(w);
}

// ---- reading ----
//
// An answer is read as strictly as protobufjs reads it, or more strictly, never less
// (test/etcd/wire-fuzz.test.ts holds the two side by side): a field met with another wire type
// than its .proto gives it, a varint longer than its type allows, a field running past its
// message or a nesting deeper than protobufjs's limit is refused with an EtcdWireError, never
// read as something else. Revisions and counts are read exactly: beyond 2^53 - 1 they are refused.

const malformed = (what: string) =>
  new EtcdWireError("ETCD_WIRE_MALFORMED", `etcd's answer is not a well-formed message: ${what}`);

/** How protobufjs reads each field the readers may skip or meet mis-typed. */
const U32 = 1; // bool, enum: 32-bit varints
const V64 = 2; // int64, uint64: up to 10 bytes
const MSG = 3; // length-delimited: a message, bytes or a string
type Kinds = ReadonlyArray<number | undefined>;
function kinds(byField: Record<number, number>): Kinds {
  const a: Array<number | undefined> = [];
  for (const [field, kind] of Object.entries(byField)) a[Number(field)] = kind;
  return a;
}
// Every field of each message in etcd's rpc.proto and kv.proto, by number.
const HEADER = kinds({ 1: V64, 2: V64, 3: V64, 4: V64 });
const KEY_VALUE = kinds({ 1: MSG, 2: V64, 3: V64, 4: V64, 5: MSG, 6: V64 });
const RANGE = kinds({ 1: MSG, 2: MSG, 3: U32, 4: V64 });
const WRITE_ANSWER = kinds({ 1: MSG, 2: V64, 3: MSG }); // DeleteRangeResponse
const PUT_ANSWER = kinds({ 1: MSG, 2: MSG });
const OP = kinds({ 1: MSG, 2: MSG, 3: MSG, 4: MSG });
const TXN = kinds({ 1: MSG, 2: U32, 3: MSG });
const EVENT = kinds({ 1: U32, 2: MSG, 3: MSG });
const WATCH = kinds({ 1: MSG, 2: V64, 3: U32, 4: U32, 5: V64, 6: MSG, 7: U32, 11: MSG });

/**
 * Transactions nested deeper than this are refused: protobufjs (as protoc) refuses messages nested
 * more than 100 deep, and each nested transaction is two of them plus its ranges' three.
 */
const MAX_TXN_DEPTH = 48;

class Reader {
  pos = 0;
  txnDepth = 0;
  constructor(readonly buf: Buffer) {}

  /**
   * A tag, a length, a bool or an enum: a varint of at most 5 bytes below 2^32, as protobufjs
   * reads them (past that its reading and a full varint's part ways, so it is refused).
   */
  uint32(): number {
    const buf = this.buf;
    let b = buf[this.pos++];
    if (b !== undefined && b < 128) return b;
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 5; i++) {
      if (i > 0) b = buf[this.pos++];
      if (b === undefined) throw malformed("a varint runs past the end");
      n += (b & 127) * scale;
      if (b < 128) {
        if (n > 0xffffffff) throw malformed("a 32-bit varint above 2^32 - 1");
        return n;
      }
      scale *= 128;
    }
    throw malformed("a varint of more than 5 bytes where a 32-bit one is due");
  }

  /**
   * An int64 the tree holds as a number (a revision, version or count): exact, since each step's
   * sum stays an integer below 2^53 whenever the value does; beyond 2^53 - 1 (negative ones
   * included, which are ten bytes from 2^63 up) it is refused rather than rounded.
   */
  int53(field: string): number {
    const buf = this.buf;
    let b = buf[this.pos++];
    if (b !== undefined && b < 128) return b;
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (i > 0) b = buf[this.pos++];
      if (b === undefined) throw malformed("a varint runs past the end");
      n += (b & 127) * scale;
      if (b < 128) {
        if (n > Number.MAX_SAFE_INTEGER) throw int64RangeError(field);
        return n;
      }
      scale *= 128;
    }
    throw malformed("a varint of more than 10 bytes");
  }

  /** An int64 read whole (a lease id uses all 64 bits): as protobufjs, the low 64 bits, signed. */
  int64(): bigint {
    let n = 0n;
    for (let i = 0; i < 10; i++) {
      const b = this.buf[this.pos++];
      if (b === undefined) throw malformed("a varint runs past the end");
      n |= BigInt(b & 127) << BigInt(7 * i);
      if (b < 128) return BigInt.asIntN(64, n);
    }
    throw malformed("a varint of more than 10 bytes");
  }

  /** Steps over a varint of up to 10 bytes (the header's 64-bit ids: no number made of them). */
  skipVarint(): void {
    const buf = this.buf;
    for (let i = 0; i < 10; i++) {
      const b = buf[this.pos++];
      if (b === undefined) throw malformed("a varint runs past the end");
      if (b < 128) return;
    }
    throw malformed("a varint of more than 10 bytes");
  }

  /** The end of the length-delimited field starting here. */
  end(limit: number): number {
    const n = this.uint32();
    const end = this.pos + n;
    if (end > limit) throw malformed("a field runs past its message");
    return end;
  }

  bytes(limit: number): Buffer {
    const end = this.end(limit);
    const b = this.buf.subarray(this.pos, end);
    this.pos = end;
    return b;
  }

  /** A field not read: checked against what the .proto says it is, then stepped over. */
  skip(tag: number, limit: number, known: Kinds): void {
    const field = tag >>> 3;
    const wire = tag & 7;
    const kind = known[field];
    if (field === 0) throw malformed("a field numbered 0");
    if (kind !== undefined) {
      if (wire !== (kind === MSG ? LEN : VARINT))
        throw malformed(`field ${field} sent with wire type ${wire}, not its own`);
      if (kind === U32) this.uint32();
      else if (kind === V64) this.skipVarint();
      else this.pos = this.end(limit);
    } else if (wire === VARINT) this.skipVarint();
    else if (wire === LEN) this.pos = this.end(limit);
    else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else throw malformed(`wire type ${wire}`);
    if (this.pos > limit) throw malformed("a field runs past its message");
  }

  /** A message's fields were read up to `end`: a value that ran past it is refused. */
  done(end: number): void {
    if (this.pos !== end) throw malformed("a field runs past its message");
  }
}

const EMPTY = Buffer.alloc(0);

function readHeader(r: Reader, end: number): ResponseHeader {
  const h = { revision: 0 };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x18) h.revision = r.int53("revision");
    else r.skip(tag, end, HEADER);
  }
  r.done(end);
  return h;
}

function readKeyValue(r: Reader, end: number): KeyValue {
  const kv: KeyValue = { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) kv.key = r.bytes(end);
    else if (tag === 0x10) kv.create_revision = r.int53("create_revision");
    else if (tag === 0x18) kv.mod_revision = r.int53("mod_revision");
    else if (tag === 0x20) kv.version = r.int53("version");
    else if (tag === 0x2a) kv.value = r.bytes(end);
    else if (tag === 0x30) {
      const lease = r.int64(); // the last one sent counts, as for any field
      if (lease === 0n) delete kv.lease;
      else kv.lease = lease;
    } else r.skip(tag, end, KEY_VALUE);
  }
  r.done(end);
  return kv;
}

function readRange(r: Reader, end: number): RangeResponse {
  const res: RangeResponse = { header: { revision: 0 }, kvs: [], more: false, count: 0 };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x12) res.kvs.push(readKeyValue(r, r.end(end)));
    else if (tag === 0x18) res.more = r.uint32() !== 0;
    else if (tag === 0x20) res.count = r.int53("count");
    else r.skip(tag, end, RANGE);
  }
  r.done(end);
  return res;
}

/** Put and delete answers: their header, how many keys a delete removed; previous values checked, not kept. */
function readWriteAnswer(r: Reader, end: number, known: Kinds): { header: ResponseHeader; deleted: number } {
  const res = { header: { revision: 0 }, deleted: 0 };
  const deletes = known === WRITE_ANSWER;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x10 && deletes) res.deleted = r.int53("deleted count");
    else if ((tag === 0x1a && deletes) || (tag === 0x12 && !deletes)) readKeyValue(r, r.end(end));
    else r.skip(tag, end, known);
  }
  r.done(end);
  return res;
}

function readResponseOp(r: Reader, end: number): ResponseOp {
  const op: ResponseOp = {};
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) op.response_range = readRange(r, r.end(end));
    else if (tag === 0x12) op.response_put = { header: readWriteAnswer(r, r.end(end), PUT_ANSWER).header };
    else if (tag === 0x1a) op.response_delete_range = readWriteAnswer(r, r.end(end), WRITE_ANSWER);
    else if (tag === 0x22) {
      if (++r.txnDepth > MAX_TXN_DEPTH)
        throw malformed(`transactions nested more than ${MAX_TXN_DEPTH} deep`);
      op.response_txn = readTxn(r, r.end(end));
      r.txnDepth--;
    } else r.skip(tag, end, OP);
  }
  r.done(end);
  return op;
}

function readTxn(r: Reader, end: number): TxnResponse {
  const res: TxnResponse = { header: { revision: 0 }, succeeded: false, responses: [] };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x10) res.succeeded = r.uint32() !== 0;
    else if (tag === 0x1a) res.responses.push(readResponseOp(r, r.end(end)));
    else r.skip(tag, end, TXN);
  }
  r.done(end);
  return res;
}

function readEvent(r: Reader, end: number): WatchEvent {
  let type: WatchEvent["type"] = "Put";
  let kv: KeyValue | undefined;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x08) {
      const t = r.uint32();
      if (t > 1) throw malformed(`an event of type ${t}, neither PUT (0) nor DELETE (1)`);
      type = t === 1 ? "Delete" : "Put";
    } else if (tag === 0x12) kv = readKeyValue(r, r.end(end));
    else if (tag === 0x1a)
      readKeyValue(r, r.end(end)); // prev_kv: checked, not kept
    else r.skip(tag, end, EVENT);
  }
  r.done(end);
  return { type, kv: kv ?? { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 } };
}

function readWhole<T>(buf: Buffer, read: (r: Reader, end: number) => T): T {
  return read(new Reader(buf), buf.length);
}

export function decodeTxnResponse(buf: Buffer): TxnResponse {
  return readWhole(buf, readTxn);
}

export function decodeRangeResponse(buf: Buffer): RangeResponse {
  return readWhole(buf, readRange);
}

function readWatch(r: Reader, end: number): WatchResponse {
  const res: WatchResponse = {
    header: { revision: 0 },
    watch_id: 0,
    created: false,
    canceled: false,
    compact_revision: 0,
    cancel_reason: "",
    events: [],
  };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x10) res.watch_id = r.int53("watch id");
    else if (tag === 0x18) res.created = r.uint32() !== 0;
    else if (tag === 0x20) res.canceled = r.uint32() !== 0;
    else if (tag === 0x28) res.compact_revision = r.int53("compact_revision");
    else if (tag === 0x32) res.cancel_reason = r.bytes(end).toString("utf8");
    else if (tag === 0x5a) res.events.push(readEvent(r, r.end(end)));
    else r.skip(tag, end, WATCH);
  }
  r.done(end);
  return res;
}

export function decodeWatchResponse(buf: Buffer): WatchResponse {
  return readWhole(buf, readWatch);
}
