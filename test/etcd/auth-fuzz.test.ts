/**
 * The hand-written Authenticate messages of the fast lane (tree/etcd/auth.ts) against protobufjs as
 * the oracle, on etcd3's copy of rpc.proto, as wire-fuzz.test.ts does for the other answers: a
 * request it writes reads back as the user and password given; an answer protobufjs writes gives
 * the token protobufjs reads (an answer without one is refused); bytes that are not such an answer
 * (random, or a real one cut, spliced or with a byte changed) give the token protobufjs reads or
 * are refused with an EtcdWireError, never anything else thrown. Runs are bounded (well under a
 * second); a failure prints the seed and the shrunk input to replay it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeAuthenticateResponse, encodeAuthenticateRequest } from "../../tree/etcd/auth.js";
import { EtcdWireError } from "../../tree/etcd/errors.js";
import { damagedMessages, rpcProto } from "./proto-oracle.js";

const Request = rpcProto.lookupType("etcdserverpb.AuthenticateRequest");
const Response = rpcProto.lookupType("etcdserverpb.AuthenticateResponse");

/** The token protobufjs reads in `bytes` (an empty one is no token), or why it could not read them. */
function oracle(bytes: Buffer): { token: string | undefined } | { failed: string } {
  try {
    const token = (Response.toObject(Response.decode(bytes), { defaults: true }) as { token: string }).token;
    return { token: token === "" ? undefined : token };
  } catch (err) {
    return { failed: String(err) };
  }
}

/** The token auth.ts reads, or the EtcdWireError it raised (anything else fails the test). */
function ours(bytes: Buffer): { token: string } | { error: EtcdWireError } {
  try {
    return { token: decodeAuthenticateResponse(bytes) };
  } catch (err) {
    if (err instanceof EtcdWireError) return { error: err };
    throw new Error(`auth.ts threw something untyped on ${bytes.toString("hex")}: ${String(err)}`, {
      cause: err,
    });
  }
}

const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  // past 127 bytes: a two-byte length
  fc.string({ minLength: 120, maxLength: 300 }),
);
const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String);
const answer = fc.record(
  {
    header: fc.record(
      { cluster_id: uint64, member_id: uint64, revision: uint64, raft_term: uint64 },
      { requiredKeys: [] },
    ),
    token: text,
  },
  { requiredKeys: [] },
);
const encode = (obj: object) => Buffer.from(Response.encode(Response.fromObject(obj)).finish());

/** The token protobufjs reads, or refused; never another token, never a token where protobufjs read none. */
function sameOrRefused(input: Buffer): void {
  const expected = oracle(input);
  const got = ours(input);
  // Refusing is always allowed: protobufjs reads some damaged bytes loosely (a field of the wrong
  // wire type read as its own) where auth.ts refuses them.
  if ("error" in got) return;
  if ("failed" in expected)
    expect.fail(
      `auth.ts read a token in ${input.toString("hex")}, which protobufjs did not read: ${expected.failed}`,
    );
  expect(got.token).toBe(expected.token);
}

describe("auth.ts against protobufjs", () => {
  it("writes an AuthenticateRequest protobufjs reads as the user and password given", () => {
    fc.assert(
      fc.property(text, text, (username, password) => {
        const read = Request.toObject(Request.decode(encodeAuthenticateRequest({ username, password })), {
          defaults: true,
        });
        expect(read).toEqual({ name: username, password });
      }),
      { numRuns: 300 },
    );
  });

  it("reads the token of every AuthenticateResponse protobufjs writes, and refuses one without a token", () => {
    fc.assert(
      fc.property(answer, (obj) => {
        const got = ours(encode(obj));
        if (obj.token === undefined || obj.token === "")
          expect("error" in got && got.error.code).toBe("ETCD_WIRE_MALFORMED");
        else expect(got).toEqual({ token: obj.token });
      }),
      { numRuns: 300 },
    );
  });

  it("refuses an answer with a token beside a broken header, a token of another wire type, a long tag, or a token not UTF-8", () => {
    const token = Buffer.from([0x12, 0x02, 0x6f, 0x6b]); // token = 2: "ok"
    expect(ours(token)).toEqual({ token: "ok" });
    for (const hex of [
      "0a02" + "0000", // the header holds a field numbered 0
      "0a03" + "088080", // the header's varint runs past it
      "0a02" + "1200", // the header's member_id sent as bytes
      "0800", // the header sent as a varint
      "1000", // the token sent as a varint
      "cdf2caaae1b46d" + "00000000", // a tag of 7 bytes (protobufjs reads 5 and skips on)
      "1202c328", // the token's bytes are not UTF-8
    ]) {
      const input = hex.startsWith("12")
        ? Buffer.from(hex, "hex")
        : Buffer.concat([Buffer.from(hex, "hex"), token]);
      const got = ours(input);
      expect("error" in got && got.error.code, hex).toBe("ETCD_WIRE_MALFORMED");
    }
  });

  it("reads random bytes as an AuthenticateResponse the same as protobufjs, or refuses them with an EtcdWireError", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (a) => sameOrRefused(Buffer.from(a))),
      { numRuns: 1500 },
    );
  });

  it("reads an AuthenticateResponse cut, spliced or with a byte changed the same as protobufjs, or refuses it", () => {
    const damaged = damagedMessages(answer, encode);
    fc.assert(
      fc.property(damaged, (input) => sameOrRefused(input)),
      { numRuns: 800 },
    );
  });
});
