/**
 * The hand-written decoder (tree/etcd/wire.ts) against protobufjs as the oracle, on etcd3's copy
 * of etcd's .proto files: answers fast-check makes up, encoded by protobufjs, read the same by
 * both; and bytes that are not such an answer (random, or a real answer cut, spliced or with a
 * byte changed) either read the same as protobufjs reads them or are refused with an
 * EtcdWireError — never anything else thrown, never a different reading. Runs are bounded so the
 * file takes a few seconds; a failure prints the seed and the shrunk bytes to replay it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EtcdWireError } from "../../tree/etcd/errors.js";
import { decodeRangeResponse, decodeTxnResponse, decodeWatchResponse } from "../../tree/etcd/wire.js";
import { damagedMessages, rpcProto } from "./proto-oracle.js";

const type = (name: string) => rpcProto.lookupType(`etcdserverpb.${name}`);
/** Every 64-bit number as its exact decimal text; bytes as Buffers; absent messages as null. */
const asObject = { longs: String, enums: Number, bytes: Buffer, defaults: true, oneofs: false };

type Obj = Record<string, unknown>;

/** Raised while reading protobufjs's answer as wire.ts would give it: a number the tree cannot hold. */
class OutOfRange extends Error {}

/** An int64 wire.ts keeps as a number: exact from 0 to 2^53 - 1, refused outside. */
function int53(text: unknown): number {
  const n = BigInt(text as string);
  if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER)) throw new OutOfRange(String(text));
  return Number(n);
}

const header = (h: unknown) => ({ revision: h ? int53((h as Obj).revision) : 0 });

function keyValue(kv: Obj) {
  const lease = BigInt(kv.lease as string);
  return {
    key: kv.key,
    value: kv.value,
    create_revision: int53(kv.create_revision),
    mod_revision: int53(kv.mod_revision),
    version: int53(kv.version),
    ...(lease === 0n ? {} : { lease }),
  };
}

const EMPTY_KV = { key: Buffer.alloc(0), value: Buffer.alloc(0), lease: "0", create_revision: "0" };

function range(r: Obj) {
  return {
    header: header(r.header),
    kvs: (r.kvs as Obj[]).map(keyValue),
    more: r.more,
    count: int53(r.count),
  };
}

function txn(t: Obj): Obj {
  return {
    header: header(t.header),
    succeeded: t.succeeded,
    responses: (t.responses as Obj[]).map((op) => {
      const out: Obj = {};
      if (op.response_range) out.response_range = range(op.response_range as Obj);
      if (op.response_put) {
        const put = op.response_put as Obj;
        if (put.prev_kv) keyValue(put.prev_kv as Obj); // read, not kept: its numbers count all the same
        out.response_put = { header: header(put.header) };
      }
      if (op.response_delete_range) {
        const del = op.response_delete_range as Obj;
        (del.prev_kvs as Obj[]).map(keyValue);
        out.response_delete_range = { header: header(del.header), deleted: int53(del.deleted) };
      }
      if (op.response_txn) out.response_txn = txn(op.response_txn as Obj);
      return out;
    }),
  };
}

function watch(w: Obj): Obj {
  return {
    header: header(w.header),
    watch_id: int53(w.watch_id),
    created: w.created,
    canceled: w.canceled,
    compact_revision: int53(w.compact_revision),
    cancel_reason: w.cancel_reason,
    events: (w.events as Obj[]).map((e) => {
      if (e.type !== 0 && e.type !== 1) throw new OutOfRange(`event type ${e.type}`);
      if (e.prev_kv) keyValue(e.prev_kv as Obj);
      return {
        type: e.type === 1 ? "Delete" : "Put",
        kv: keyValue({ ...EMPTY_KV, mod_revision: "0", version: "0", ...((e.kv as Obj | null) ?? {}) }),
      };
    }),
  };
}

const MESSAGES = {
  RangeResponse: { decode: decodeRangeResponse, project: range },
  TxnResponse: { decode: decodeTxnResponse, project: txn },
  WatchResponse: { decode: decodeWatchResponse, project: watch },
} as const;
type Name = keyof typeof MESSAGES;

/** What protobufjs reads in `bytes`, as wire.ts should give it: a value, out of range, or a failure. */
function oracle(name: Name, bytes: Buffer): { ok: Obj } | { range: string } | { failed: string } {
  let obj: Obj;
  try {
    const t = type(name);
    obj = t.toObject(t.decode(bytes), asObject);
  } catch (err) {
    return { failed: String(err) };
  }
  try {
    return { ok: MESSAGES[name].project(obj) };
  } catch (err) {
    if (err instanceof OutOfRange) return { range: err.message };
    throw err;
  }
}

/** Reads `bytes` with wire.ts: the answer, or the EtcdWireError it raised (anything else fails the test). */
function ours(name: Name, bytes: Buffer): { ok: unknown } | { error: EtcdWireError } {
  try {
    return { ok: MESSAGES[name].decode(bytes) };
  } catch (err) {
    if (err instanceof EtcdWireError) return { error: err };
    throw new Error(`wire.ts threw something untyped on ${bytes.toString("hex")}: ${String(err)}`, {
      cause: err,
    });
  }
}

// ---- answers as etcd could send them ----

const TWO_53 = 2n ** 53n;
/** Revisions and counts: mostly small, some near and beyond 2^53, some negative (all int64s). */
const int64 = fc.oneof(
  { weight: 6, arbitrary: fc.bigInt({ min: 0n, max: 100_000n }) },
  { weight: 2, arbitrary: fc.bigInt({ min: TWO_53 - 3n, max: TWO_53 + 3n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) },
);
const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const bytes = fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a));
const text = (n: bigint) => n.toString();

const headerArb = fc.record(
  {
    cluster_id: uint64.map(text),
    member_id: uint64.map(text),
    revision: int64.map(text),
    raft_term: uint64.map(text),
  },
  { requiredKeys: [] },
);
const kvArb = fc.record(
  {
    key: bytes,
    value: bytes,
    create_revision: int64.map(text),
    mod_revision: int64.map(text),
    version: int64.map(text),
    lease: fc.oneof(fc.constant(0n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })).map(text),
  },
  { requiredKeys: [] },
);
const rangeArb = fc.record(
  { header: headerArb, kvs: fc.array(kvArb, { maxLength: 4 }), more: fc.boolean(), count: int64.map(text) },
  { requiredKeys: [] },
);
const { txnArb } = fc.letrec((tie) => ({
  txnArb: fc.record(
    {
      header: headerArb,
      succeeded: fc.boolean(),
      responses: fc.array(tie("op"), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  ),
  op: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    rangeArb.map((r) => ({ response_range: r })),
    fc.record({ header: headerArb, prev_kv: kvArb }, { requiredKeys: [] }).map((p) => ({ response_put: p })),
    fc
      .record(
        { header: headerArb, deleted: int64.map(text), prev_kvs: fc.array(kvArb, { maxLength: 2 }) },
        { requiredKeys: [] },
      )
      .map((d) => ({ response_delete_range: d })),
    tie("txnArb").map((t) => ({ response_txn: t })),
  ),
}));
const watchArb = fc.record(
  {
    header: headerArb,
    watch_id: int64.map(text),
    created: fc.boolean(),
    canceled: fc.boolean(),
    compact_revision: int64.map(text),
    cancel_reason: fc.string({ unit: "grapheme", maxLength: 12 }),
    fragment: fc.boolean(),
    events: fc.array(
      fc.record({ type: fc.constantFrom(0, 1), kv: kvArb, prev_kv: kvArb }, { requiredKeys: [] }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: [] },
);

const ARBS: Record<Name, fc.Arbitrary<Obj>> = {
  RangeResponse: rangeArb as fc.Arbitrary<Obj>,
  TxnResponse: txnArb as fc.Arbitrary<Obj>,
  WatchResponse: watchArb as fc.Arbitrary<Obj>,
};

const encode = (name: Name, obj: Obj) => {
  const t = type(name);
  return Buffer.from(t.encode(t.fromObject(obj)).finish());
};

/** The same bytes as protobufjs reads them, or refused; never read differently. */
function sameOrRefused(name: Name, input: Buffer): void {
  const expected = oracle(name, input);
  const got = ours(name, input);
  // Refusing is always allowed here: protobufjs reads some damaged bytes loosely (a varint running
  // past its message, a field of the wrong wire type read as its own), where wire.ts refuses them.
  // A well-formed answer refused would fail the first property, which reads only those.
  if ("error" in got) return;
  if (!("ok" in expected))
    expect.fail(
      `wire.ts read ${input.toString("hex")}, which protobufjs did not: ${Object.values(expected)[0]}`,
    );
  if ("ok" in expected) expect(got.ok).toEqual(expected.ok);
}

describe("wire.ts against protobufjs", () => {
  for (const name of Object.keys(MESSAGES) as Name[]) {
    it(`reads every ${name} protobufjs writes as protobufjs reads it, refusing only numbers beyond 2^53 - 1`, () => {
      fc.assert(
        fc.property(ARBS[name], (obj) => {
          const input = encode(name, obj);
          const expected = oracle(name, input);
          const got = ours(name, input);
          if ("range" in expected) {
            expect("error" in got && got.error.code).toBe("ETCD_WIRE_INT64_RANGE");
          } else {
            expect(got).toEqual({ ok: (expected as { ok: Obj }).ok });
          }
        }),
        { numRuns: 300 },
      );
    });

    it(`reads random bytes as a ${name} the same as protobufjs, or refuses them with an EtcdWireError`, () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 64 }), (a) => sameOrRefused(name, Buffer.from(a))),
        { numRuns: 1500 },
      );
    });

    it(`reads a ${name} cut, spliced or with a byte changed the same as protobufjs, or refuses it`, () => {
      const damaged = damagedMessages(ARBS[name], (obj) => encode(name, obj));
      fc.assert(
        fc.property(damaged, (input) => sameOrRefused(name, input)),
        { numRuns: 800 },
      );
    });
  }
});
