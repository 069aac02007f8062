/**
 * The hand-written etcd messages (tree/etcd/wire.ts) against protobufjs reading etcd3's copy of
 * etcd's .proto files: what wire.ts writes, protobufjs reads back as the same request; what
 * protobufjs writes (as etcd would answer), wire.ts reads as the same answer. No etcd needed.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { EtcdWireError } from "../../tree/etcd/errors.js";
import {
  decodeRangeResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeRangeRequest,
  encodeTxnRequest,
  encodeWatchRequest,
  type RequestOp,
  type TxnRequest,
} from "../../tree/etcd/wire.js";

const etcd3Dir = dirname(createRequire(import.meta.url).resolve("etcd3/package.json"));
// Field names as in the .proto (keepCase), as etcd3 loads them.
const root = new protobuf.Root().loadSync(join(etcd3Dir, "proto/rpc.proto"), { keepCase: true });
const type = (name: string) => root.lookupType(`etcdserverpb.${name}`);
const asObject = { longs: Number, enums: String, bytes: Buffer, defaults: true, oneofs: false };

const b = (s: string) => Buffer.from(s, "utf8");
/** Beyond 32 bits, and 2^53 - 1: varints of 5 and 8 bytes. */
const BIG = 2 ** 40 + 12345;
const MAX = Number.MAX_SAFE_INTEGER;

/** How protobufjs reads `bytes` back: what wire.ts wrote, in protobufjs's object form. */
function readBack(name: string, bytes: Buffer): Record<string, unknown> {
  const t = type(name);
  return t.toObject(t.decode(bytes), asObject);
}

describe("etcd requests written by hand", () => {
  it("writes a transaction of compares and puts, deletes, ranges and a nested transaction as protobufjs reads it", () => {
    const nested: TxnRequest = {
      compare: [
        { key: b("n/a"), target: "Mod", result: "Equal", mod_revision: BIG },
        { key: b("n/b"), target: "Version", result: "Equal", version: 0 },
      ],
      success: [
        { request_put: { key: b("n/a"), value: b('{"v":"ü€𝄞"}') } },
        { request_delete_range: { key: b("n/c") } },
      ],
    };
    const success: RequestOp[] = [
      { request_txn: nested },
      { request_put: { key: b("x"), value: Buffer.alloc(300, 7) } },
      { request_delete_range: { key: b("h/"), range_end: b("h0") } },
      { request_range: { key: b("r"), range_end: b("s"), limit: 500, revision: MAX, keys_only: true } },
      { request_txn: {} },
    ];
    const req: TxnRequest = {
      compare: [
        { key: b("g/"), range_end: b("g0"), target: "Mod", result: "Less", mod_revision: 128 },
        { key: b("v"), target: "Version", result: "Equal", version: 3 },
      ],
      success,
      failure: [{ request_range: { key: b("f") } }],
    };
    const got = readBack("TxnRequest", encodeTxnRequest(req));
    const compare = got.compare as Array<Record<string, unknown>>;
    expect(compare[0]).toMatchObject({
      key: b("g/"),
      range_end: b("g0"),
      target: "Mod",
      result: "Less",
      mod_revision: 128,
    });
    expect(compare[1]).toMatchObject({ key: b("v"), target: "Version", result: "Equal", version: 3 });
    const ops = got.success as Array<Record<string, Record<string, unknown>>>;
    const inner = ops[0]!.request_txn!;
    expect(inner.compare).toMatchObject([
      { key: b("n/a"), target: "Mod", result: "Equal", mod_revision: BIG },
      { key: b("n/b"), target: "Version", result: "Equal", version: 0 },
    ]);
    expect(inner.success).toMatchObject([
      { request_put: { key: b("n/a"), value: b('{"v":"ü€𝄞"}') } },
      { request_delete_range: { key: b("n/c"), range_end: Buffer.alloc(0) } },
    ]);
    expect(ops[1]!.request_put).toMatchObject({ key: b("x"), value: Buffer.alloc(300, 7), lease: 0 });
    expect(ops[2]!.request_delete_range).toMatchObject({ key: b("h/"), range_end: b("h0") });
    expect(ops[3]!.request_range).toMatchObject({
      key: b("r"),
      range_end: b("s"),
      limit: 500,
      revision: MAX,
      keys_only: true,
      serializable: false,
    });
    expect(ops[4]!.request_txn).toMatchObject({ compare: [], success: [], failure: [] });
    expect(got.failure).toMatchObject([{ request_range: { key: b("f"), revision: 0 } }]);
  });

  it("marks which member of a compare's target is set even when it is 0 (a key that must not exist)", () => {
    const t = type("Compare");
    const bytes = encodeTxnRequest({
      compare: [{ key: b("k"), target: "Version", result: "Equal", version: 0 }],
    });
    const c = (type("TxnRequest").decode(bytes) as unknown as { compare: protobuf.Message[] }).compare[0]!;
    expect(t.toObject(c, { oneofs: true }).target_union).toBe("version");
  });

  it("writes a key or value given as a string as its UTF-8, the bytes a Buffer of it gives", () => {
    const text = 'n/ü€𝄞\u0000{"v":"x"}';
    const asString = encodeTxnRequest({
      compare: [{ key: text, range_end: `${text}0`, target: "Mod", result: "Less", mod_revision: 9 }],
      success: [{ request_put: { key: text, value: text } }, { request_delete_range: { key: text } }],
    });
    const asBuffer = encodeTxnRequest({
      compare: [{ key: b(text), range_end: b(`${text}0`), target: "Mod", result: "Less", mod_revision: 9 }],
      success: [
        { request_put: { key: b(text), value: b(text) } },
        { request_delete_range: { key: b(text) } },
      ],
    });
    expect(asString).toEqual(asBuffer);
    expect((readBack("TxnRequest", asString).success as Array<Record<string, unknown>>)[0]).toMatchObject({
      request_put: { key: b(text), value: b(text) },
    });
  });

  it("writes the same bytes as protobufjs for a request without zero fields", () => {
    const req = { key: b("a"), range_end: b("b"), limit: 2, revision: BIG };
    expect(encodeRangeRequest(req)).toEqual(Buffer.from(type("RangeRequest").encode(req).finish()));
  });

  it("writes a watch's create and progress requests as protobufjs reads them", () => {
    expect(
      readBack(
        "WatchRequest",
        encodeWatchRequest({ create_request: { key: b("n"), range_end: b("o"), start_revision: BIG } }),
      ).create_request,
    ).toMatchObject({ key: b("n"), range_end: b("o"), start_revision: BIG, prev_kv: false });
    const progress = type("WatchRequest").decode(encodeWatchRequest({ progress_request: {} }));
    expect(type("WatchRequest").toObject(progress, { oneofs: true }).request_union).toBe("progress_request");
  });

  it("refuses a revision that is not a whole number from 0 to 2^53 instead of writing a wrong one", () => {
    for (const bad of [-1, 1.5, 2 ** 60, Number.NaN])
      expect(() => encodeRangeRequest({ key: b("k"), revision: bad })).toThrow(RangeError);
  });
});

describe("etcd answers read by hand", () => {
  // What etcd puts in every header: the cluster and member ids are full 64-bit numbers, as lease ids are.
  const LEASE = 7587868207497815812n;
  const header = {
    cluster_id: "14841639068965178418",
    member_id: "10276657743932975437",
    revision: BIG,
    raft_term: 2,
  };
  const kv = (key: string, value: string, rev: number) => ({
    key: b(key),
    value: b(value),
    create_revision: 3,
    mod_revision: rev,
    version: 2,
    lease: String(LEASE),
  });
  const encode = (name: string, obj: Record<string, unknown>) => {
    const t = type(name);
    return Buffer.from(t.encode(t.fromObject(obj)).finish());
  };

  it("reads a transaction's answer: revision, outcome, nested outcomes and ranges' key-values", () => {
    const bytes = encode("TxnResponse", {
      header,
      succeeded: true,
      responses: [
        { response_txn: { header, succeeded: false, responses: [] } },
        { response_txn: { header, succeeded: true, responses: [{ response_put: { header } }] } },
        { response_range: { header, kvs: [kv("a", "1", 9), kv("b", "ü", MAX)], more: true, count: 5 } },
        { response_delete_range: { header, deleted: 4 } },
      ],
    });
    const got = decodeTxnResponse(bytes);
    expect(got.header).toEqual({ revision: BIG });
    expect(got.succeeded).toBe(true);
    expect(got.responses[0]!.response_txn).toEqual({
      header: { revision: BIG },
      succeeded: false,
      responses: [],
    });
    expect(got.responses[1]!.response_txn!.succeeded).toBe(true);
    expect(got.responses[1]!.response_txn!.responses).toEqual([
      { response_put: { header: { revision: BIG } } },
    ]);
    expect(got.responses[2]!.response_range).toEqual({
      header: { revision: BIG },
      kvs: [
        { key: b("a"), value: b("1"), create_revision: 3, mod_revision: 9, version: 2, lease: LEASE },
        { key: b("b"), value: b("ü"), create_revision: 3, mod_revision: MAX, version: 2, lease: LEASE },
      ],
      more: true,
      count: 5,
    });
    expect(got.responses[3]!.response_delete_range).toEqual({ header: { revision: BIG }, deleted: 4 });
  });

  it("reads a range's answer, and an empty one as no key-values at revision 0", () => {
    expect(
      decodeRangeResponse(encode("RangeResponse", { header, kvs: [kv("k", "v", 7)], count: 1 })),
    ).toEqual({
      header: { revision: BIG },
      kvs: [{ key: b("k"), value: b("v"), create_revision: 3, mod_revision: 7, version: 2, lease: LEASE }],
      more: false,
      count: 1,
    });
    expect(decodeRangeResponse(Buffer.alloc(0))).toEqual({
      header: { revision: 0 },
      kvs: [],
      more: false,
      count: 0,
    });
  });

  it("reads a watch's events (puts and deletes), its creation, and its cancellation with the compacted revision", () => {
    const events = decodeWatchResponse(
      encode("WatchResponse", {
        header,
        watch_id: 1,
        events: [
          { type: "Put", kv: kv("n/a", '{"v":1}', 40) },
          { type: "Delete", kv: { key: b("n/b"), mod_revision: 40 } },
        ],
      }),
    );
    expect(events).toEqual({
      header: { revision: BIG },
      watch_id: 1,
      created: false,
      canceled: false,
      compact_revision: 0,
      cancel_reason: "",
      events: [
        {
          type: "Put",
          kv: {
            key: b("n/a"),
            value: b('{"v":1}'),
            create_revision: 3,
            mod_revision: 40,
            version: 2,
            lease: LEASE,
          },
        },
        {
          type: "Delete",
          kv: { key: b("n/b"), value: Buffer.alloc(0), create_revision: 0, mod_revision: 40, version: 0 },
        },
      ],
    });
    expect(decodeWatchResponse(encode("WatchResponse", { header, created: true }))).toMatchObject({
      created: true,
      canceled: false,
      events: [],
    });
    expect(
      decodeWatchResponse(
        encode("WatchResponse", {
          header,
          canceled: true,
          compact_revision: 77,
          cancel_reason: "mvcc: required revision has been compacted",
        }),
      ),
    ).toMatchObject({
      canceled: true,
      compact_revision: 77,
      cancel_reason: "mvcc: required revision has been compacted",
    });
  });

  it("reads revisions exactly up to 2^53 - 1 and refuses larger or negative ones rather than rounding them", () => {
    const at = (revision: string) => encode("RangeResponse", { header: { ...header, revision } });
    expect(decodeRangeResponse(at(String(MAX))).header.revision).toBe(MAX);
    // 2^53 + 1 has no number: it used to be read as 2^53, a revision etcd never answered.
    for (const revision of ["9007199254740993", "9223372036854775807", "-1"]) {
      let err: unknown;
      try {
        decodeRangeResponse(at(revision));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EtcdWireError);
      expect((err as EtcdWireError).code).toBe("ETCD_WIRE_INT64_RANGE");
    }
    const kvAt = (field: string, value: string) =>
      encode("RangeResponse", { kvs: [{ ...kv("k", "v", 1), [field]: value }] });
    for (const field of ["create_revision", "mod_revision", "version"])
      expect(() => decodeRangeResponse(kvAt(field, "9007199254740993"))).toThrow(/outside 0 \.\. 2\^53 - 1/);
  });

  it("reads a lease id exactly as the 64-bit number it is, negative ones included", () => {
    for (const lease of [2n ** 63n - 1n, 2n ** 53n + 1n, -5n, 1n]) {
      const got = decodeRangeResponse(
        encode("RangeResponse", { kvs: [{ ...kv("k", "v", 1), lease: String(lease) }] }),
      );
      expect(got.kvs[0]!.lease).toBe(lease);
    }
    const none = decodeRangeResponse(encode("RangeResponse", { kvs: [{ ...kv("k", "v", 1), lease: "0" }] }));
    expect(none.kvs[0]).not.toHaveProperty("lease");
  });

  it("refuses a truncated answer rather than reading past it", () => {
    const bytes = encode("TxnResponse", {
      header,
      succeeded: true,
      responses: [{ response_put: { header } }],
    });
    for (const cut of [1, 3, bytes.length - 1])
      expect(() => decodeTxnResponse(bytes.subarray(0, cut))).toThrow(EtcdWireError);
  });
});
