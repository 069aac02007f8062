/**
 * etcd's KV and Watch messages in protobuf, written by hand for the fields the tree uses. etcd3
 * goes through protobufjs's generic path: every request built as an object, copied by fromObject
 * (each revision parsed from a string into a Long), then encoded; every answer decoded, then
 * copied again by toObject with each 64-bit field turned into a string (the header's cluster and
 * member ids are full 64-bit numbers, the slowest to print). A tree write pays that for its
 * transaction and again for its watch event. Here a request is encoded straight from its fields
 * into one buffer, and an answer decoded into the fields read: revisions as numbers (etcd's stay
 * far below 2^53), keys and values as views of the received bytes, the ids not at all.
 *
 * Field numbers are those of etcd's api/etcdserverpb/rpc.proto and api/mvccpb/kv.proto;
 * test/etcd/wire.test.ts checks both directions against protobufjs reading etcd3's own copy of
 * those files. Fields not listed are skipped when read and never written. Over 400 lines: the
 * messages' shapes, how they are written and how they are read are one description of the same
 * fields and field numbers, read side by side against the .proto.
 */

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

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  /** A varint as a number: exact below 2^53, which every field read here is. */
  varint(): number {
    const buf = this.buf;
    let n = 0;
    let scale = 1;
    for (;;) {
      if (this.pos >= buf.length) throw new RangeError("protobuf: truncated varint");
      const b = buf[this.pos++]!;
      n += (b & 127) * scale;
      if (b < 128) return n;
      scale *= 128;
    }
  }

  /** The end of the length-delimited field starting here. */
  end(limit: number): number {
    const n = this.varint();
    const end = this.pos + n;
    if (end > limit) throw new RangeError("protobuf: field runs past its message");
    return end;
  }

  bytes(limit: number): Buffer {
    const end = this.end(limit);
    const b = this.buf.subarray(this.pos, end);
    this.pos = end;
    return b;
  }

  skip(wire: number, limit: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === LEN) this.pos = this.end(limit);
    else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else throw new RangeError(`protobuf: wire type ${wire} not expected`);
    if (this.pos > limit) throw new RangeError("protobuf: field runs past its message");
  }
}

const EMPTY = Buffer.alloc(0);

function readHeader(r: Reader, end: number): ResponseHeader {
  const h = { revision: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x18) h.revision = r.varint();
    else r.skip(tag & 7, end);
  }
  return h;
}

function readKeyValue(r: Reader, end: number): KeyValue {
  const kv: KeyValue = { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x0a) kv.key = r.bytes(end);
    else if (tag === 0x10) kv.create_revision = r.varint();
    else if (tag === 0x18) kv.mod_revision = r.varint();
    else if (tag === 0x20) kv.version = r.varint();
    else if (tag === 0x2a) kv.value = r.bytes(end);
    else r.skip(tag & 7, end);
  }
  return kv;
}

function readRange(r: Reader, end: number): RangeResponse {
  const res: RangeResponse = { header: { revision: 0 }, kvs: [], more: false, count: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x12) res.kvs.push(readKeyValue(r, r.end(end)));
    else if (tag === 0x18) res.more = r.varint() !== 0;
    else if (tag === 0x20) res.count = r.varint();
    else r.skip(tag & 7, end);
  }
  return res;
}

/** Put and delete answers: their header, and how many keys a delete removed. */
function readWriteAnswer(r: Reader, end: number): { header: ResponseHeader; deleted: number } {
  const res = { header: { revision: 0 }, deleted: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x10) res.deleted = r.varint();
    else r.skip(tag & 7, end);
  }
  return res;
}

function readResponseOp(r: Reader, end: number): ResponseOp {
  const op: ResponseOp = {};
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x0a) op.response_range = readRange(r, r.end(end));
    else if (tag === 0x12) op.response_put = { header: readWriteAnswer(r, r.end(end)).header };
    else if (tag === 0x1a) op.response_delete_range = readWriteAnswer(r, r.end(end));
    else if (tag === 0x22) op.response_txn = readTxn(r, r.end(end));
    else r.skip(tag & 7, end);
  }
  return op;
}

function readTxn(r: Reader, end: number): TxnResponse {
  const res: TxnResponse = { header: { revision: 0 }, succeeded: false, responses: [] };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x10) res.succeeded = r.varint() !== 0;
    else if (tag === 0x1a) res.responses.push(readResponseOp(r, r.end(end)));
    else r.skip(tag & 7, end);
  }
  return res;
}

function readEvent(r: Reader, end: number): WatchEvent {
  let type: WatchEvent["type"] = "Put";
  let kv: KeyValue | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 0x08) type = r.varint() === 1 ? "Delete" : "Put";
    else if (tag === 0x12) kv = readKeyValue(r, r.end(end));
    else r.skip(tag & 7, end);
  }
  return { type, kv: kv ?? { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0, version: 0 } };
}

export function decodeTxnResponse(buf: Buffer): TxnResponse {
  return readTxn(new Reader(buf), buf.length);
}

export function decodeRangeResponse(buf: Buffer): RangeResponse {
  return readRange(new Reader(buf), buf.length);
}

export function decodeWatchResponse(buf: Buffer): WatchResponse {
  const r = new Reader(buf);
  const end = buf.length;
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
    const tag = r.varint();
    if (tag === 0x0a) res.header = readHeader(r, r.end(end));
    else if (tag === 0x10) res.watch_id = r.varint();
    else if (tag === 0x18) res.created = r.varint() !== 0;
    else if (tag === 0x20) res.canceled = r.varint() !== 0;
    else if (tag === 0x28) res.compact_revision = r.varint();
    else if (tag === 0x32) res.cancel_reason = r.bytes(end).toString("utf8");
    else if (tag === 0x5a) res.events.push(readEvent(r, r.end(end)));
    else r.skip(tag & 7, end);
  }
  return res;
}
