/**
 * The unary calls' own HTTP/2 wire (tree/etcd/h2.ts) answers failures as grpc-js did, so the tree
 * tells an unreachable member, a silent one and etcd's own refusals apart exactly as before: each
 * against a real listener (etcd, a closed port, a socket that never answers). What a broken or
 * hostile member may send (a malformed status, a short or oversized frame, a cut stream, TLS it
 * should not be trusted with) comes from a local node:http2 server answering as such a member would.
 */
import {
  createServer as createH2Server,
  createSecureServer,
  type Http2SecureServer,
  type Http2Server,
  constants as httpConstants,
  type SecureServerOptions,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from "node:http2";
import { type AddressInfo, createServer, type Server } from "node:net";
import {
  castGrpcError,
  GRPCDeadlineExceededError,
  GRPCInternalError,
  GRPCResourceExhastedError,
  GRPCUnavailableError,
  isRecoverableError,
} from "etcd3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connectEtcd, isEtcdFailure } from "../../tree/etcd/client.js";
import { createEtcdTree } from "../../tree/etcd/etcd-tree.js";
import {
  createH2Transport,
  DEFAULT_MAX_ANSWER_BYTES,
  type H2Options,
  type Member,
} from "../../tree/etcd/h2.js";
import { createLibraryCalls } from "../../tree/etcd/library-calls.js";
import { EtcdRpc } from "../../tree/etcd/rpc.js";
import { decodeRangeResponse, encodeRangeRequest } from "../../tree/etcd/wire.js";
import { type EtcdCluster, freePort, startEtcd } from "./etcd-process.js";

let etcd: EtcdCluster;
const h2 = createH2Transport();
const member = (host: string): Member => ({ host });
const RANGE = "/etcdserverpb.KV/Range";

beforeAll(async () => {
  etcd = await startEtcd();
}, 60_000);

afterAll(async () => {
  h2.close();
  await etcd?.remove();
});

/** The error a call ends with, as etcd3 types it. */
async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return castGrpcError(err as Error);
  }
  throw new Error("the call did not fail");
}

describe("unary calls on a plain HTTP/2 session", () => {
  it("answers etcd's message, and etcd's refusal with its gRPC code and details", async () => {
    const m = member(etcd.endpoints[0]!);
    const ok = decodeRangeResponse(await h2.call(m, RANGE, encodeRangeRequest({ key: "nothing" }), {}, 5000));
    expect(ok.kvs).toEqual([]);
    expect(ok.header.revision).toBeGreaterThan(0);
    const err = await failure(
      h2.call(m, RANGE, encodeRangeRequest({ key: "nothing", revision: 1_000_000_000 }), {}, 5000),
    );
    expect(err.message).toMatch(/^11 OUT_OF_RANGE: etcdserver: mvcc: required revision is a future revision/);
    expect(isEtcdFailure(err)).toBe(true);
  });

  it("fails a member nobody listens on as UNAVAILABLE, which the breaker counts", async () => {
    const port = await freePort();
    const err = await failure(
      h2.call(member(`127.0.0.1:${port}`), RANGE, encodeRangeRequest({ key: "k" }), {}, 5000),
    );
    expect(err).toBeInstanceOf(GRPCUnavailableError);
    expect(isRecoverableError(err)).toBe(true);
    expect(isEtcdFailure(err)).toBe(true);
  });

  it("gives up on a member that never answers at the deadline, and connects afresh for the next call", async () => {
    let connections = 0;
    const silent: Server = createServer(() => {
      connections++;
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    try {
      const { port } = silent.address() as { port: number };
      const m = member(`127.0.0.1:${port}`);
      for (let i = 0; i < 2; i++) {
        const err = await failure(h2.call(m, RANGE, encodeRangeRequest({ key: "k" }), {}, 200));
        expect(err).toBeInstanceOf(GRPCDeadlineExceededError);
        expect(isEtcdFailure(err)).toBe(true);
      }
      // The silent connection was dropped at the first deadline, not used again.
      expect(connections).toBe(2);
    } finally {
      h2.close();
      silent.close();
    }
  });
});

/** A frame as gRPC sends one: not compressed, the length it declares, then the bytes. */
function frame(message: Buffer, declared = message.length): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(declared, 1);
  return Buffer.concat([prefix, message]);
}

/** An empty range answered at revision 7, as etcd writes it (header { revision: 7 }). */
const EMPTY_RANGE_AT_7 = Buffer.from([0x0a, 0x02, 0x18, 0x07]);

type Answer = (stream: ServerHttp2Stream) => void;

/** Answers with `body` and then the trailers `grpc-status`/`grpc-message` given. */
const answer =
  (body: Buffer, trailers: Record<string, string> = { "grpc-status": "0" }): Answer =>
  (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers(trailers));
    stream.end(body);
  };

/** A local HTTP/2 server that answers every call as `reply` says: how a broken gRPC server might. */
async function fakeMember(
  reply: Answer,
  tls?: SecureServerOptions,
): Promise<{ member: Member; close(): Promise<void> }> {
  const server: Http2Server | Http2SecureServer = tls ? createSecureServer(tls) : createH2Server();
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (s: ServerHttp2Session) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream: ServerHttp2Stream) => {
    stream.resume(); // the request is read and dropped
    stream.on("error", () => {}); // a stream this member resets on purpose
    reply(stream);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    member: member(`127.0.0.1:${port}`),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
}

/** One Range call on a fake member through a transport of its own, closed after. */
async function callFake(reply: Answer, options: H2Options = {}, timeoutMs = 5000): Promise<Buffer> {
  const fake = await fakeMember(reply);
  const transport = createH2Transport(options);
  try {
    return await transport.call(fake.member, RANGE, encodeRangeRequest({ key: "k" }), {}, timeoutMs);
  } finally {
    transport.close();
    await fake.close();
  }
}

describe("answers that are not well-formed gRPC", () => {
  it("fails the call with the status sent when grpc-message is not valid percent-encoding, keeping its text", async () => {
    for (const text of ["%E0%A4%A", "100%", "%FF%FE bytes that are not UTF-8"]) {
      const err = await failure(
        callFake(answer(Buffer.alloc(0), { "grpc-status": "13", "grpc-message": text })),
      );
      expect(err).toBeInstanceOf(GRPCInternalError);
      expect(err.message).toBe(`13 INTERNAL: ${text}`);
    }
  });

  it("reads a malformed grpc-message in a trailers-only answer the same way", async () => {
    const err = await failure(
      callFake((stream) =>
        stream.respond(
          {
            ":status": 200,
            "content-type": "application/grpc",
            "grpc-status": "14",
            "grpc-message": "%C3%28%",
          },
          { endStream: true },
        ),
      ),
    );
    expect(err).toBeInstanceOf(GRPCUnavailableError);
    expect(err.message).toBe("14 UNAVAILABLE: %C3%28%");
  });

  it("still decodes a well-formed grpc-message", async () => {
    const err = await failure(
      callFake(answer(Buffer.alloc(0), { "grpc-status": "9", "grpc-message": "not%20now%3A%20%C3%BC" })),
    );
    expect(err.message).toBe("9 FAILED_PRECONDITION: not now: ü");
  });

  it("fails a frame shorter than its declared length as INTERNAL instead of answering an empty range", async () => {
    // Before: the 0 bytes that arrived were read as a range with nothing in it.
    const err = await failure(callFake(answer(frame(Buffer.alloc(0), EMPTY_RANGE_AT_7.length))));
    expect(err).toBeInstanceOf(GRPCInternalError);
    expect(err.message).toMatch(/truncated gRPC answer: its message declares 4 bytes, 0 arrived/);
    const short = await failure(callFake(answer(frame(EMPTY_RANGE_AT_7.subarray(0, 2), 4))));
    expect(short).toBeInstanceOf(GRPCInternalError);
  });

  it("fails an answer cut inside its prefix, or with bytes after its one message, as INTERNAL", async () => {
    const cut = await failure(callFake(answer(Buffer.from([0, 0, 0]))));
    expect(cut).toBeInstanceOf(GRPCInternalError);
    expect(cut.message).toMatch(/not even its prefix/);
    const twice = await failure(
      callFake(answer(Buffer.concat([frame(EMPTY_RANGE_AT_7), frame(EMPTY_RANGE_AT_7)]))),
    );
    expect(twice).toBeInstanceOf(GRPCInternalError);
    expect(twice.message).toMatch(/more than one message/);
  });

  it("fails a stream the member resets as grpc-js does: refused is UNAVAILABLE, an internal error INTERNAL", async () => {
    const refused = await failure(callFake((stream) => stream.close(httpConstants.NGHTTP2_REFUSED_STREAM)));
    expect(refused).toBeInstanceOf(GRPCUnavailableError);
    expect(refused.message).toBe("14 UNAVAILABLE: Stream refused by server");
    const broken = await failure(callFake((stream) => stream.close(httpConstants.NGHTTP2_INTERNAL_ERROR)));
    expect(broken).toBeInstanceOf(GRPCInternalError);
    expect(broken.message).toBe("13 INTERNAL: Received RST_STREAM with code 2 (Internal server error)");
    expect(isRecoverableError(broken)).toBe(true);
  });

  it("fails an answer cut off halfway, by its stream ending without a status or its connection dropping", async () => {
    const half = frame(EMPTY_RANGE_AT_7).subarray(0, 7);
    const ended = await failure(
      callFake((stream) => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" });
        stream.end(half);
      }),
    );
    expect(ended.message).toBe("2 UNKNOWN: no gRPC status in an HTTP 200 answer");
    const dropped = await failure(
      callFake((stream) => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" });
        stream.write(half, () => stream.session?.destroy());
      }),
    );
    for (const err of [ended, dropped]) {
      expect(isEtcdFailure(err)).toBe(true);
      expect(isRecoverableError(err)).toBe(true);
    }
  });

  it("answers a well-formed frame exactly", async () => {
    const got = decodeRangeResponse(await callFake(answer(frame(EMPTY_RANGE_AT_7))));
    expect(got).toEqual({ header: { revision: 7 }, kvs: [], more: false, count: 0 });
  });
});

describe("answers read through EtcdRpc", () => {
  it("fails a call whose message does not read as INTERNAL, naming the wire error, instead of answering", async () => {
    // A range answer whose count is a varint cut short: it used to throw a bare RangeError.
    const fake = await fakeMember(answer(frame(Buffer.from([0x20, 0x80]))));
    const rpc = new EtcdRpc({ endpoints: [fake.member.host] });
    try {
      const err = await failure(rpc.range({ key: "k" }));
      expect(err).toBeInstanceOf(GRPCInternalError);
      expect(err.message).toMatch(
        /^13 INTERNAL: etcd's answer to \/etcdserverpb.KV\/Range \(ETCD_WIRE_MALFORMED\)/,
      );
      expect(isEtcdFailure(err)).toBe(true);
    } finally {
      rpc.close();
      await fake.close();
    }
  });
});

describe("the etcd lane's reference implementation (etcd3's KV and Watch clients)", () => {
  /** A range answer at a revision of 2^53 (header { revision: 2^53 }): beyond what the tree holds exactly. */
  const RANGE_AT_2_53 = Buffer.from([0x0a, 0x09, 0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]);

  it("refuses a revision beyond 2^53 - 1 as the fast lane does: the same INTERNAL error, never a rounded number", async () => {
    const fake = await fakeMember(answer(frame(RANGE_AT_2_53)));
    const fast = new EtcdRpc({ endpoints: [fake.member.host] });
    const client = connectEtcd({ endpoints: [fake.member.host] });
    try {
      const errors = [
        await failure(fast.range({ key: "k" })),
        await failure(createLibraryCalls(client).range({ key: "k" })),
      ];
      for (const err of errors) {
        expect(err).toBeInstanceOf(GRPCInternalError);
        expect(isEtcdFailure(err)).toBe(true);
      }
      expect(errors[1]!.message).toBe(errors[0]!.message);
      expect(errors[0]!.message).toBe(
        "13 INTERNAL: etcd's answer to /etcdserverpb.KV/Range (ETCD_WIRE_INT64_RANGE): etcd answered a revision outside 0 .. 2^53 - 1, which the tree cannot hold exactly",
      );
    } finally {
      fast.close();
      client.close();
      await fake.close();
    }
  });

  it("is what a tree uses with BYTESEEK_FAST=0: its calls never reach the fast lane, and read back what they wrote", async () => {
    // Spies that call through: they only count what reached the fast lane.
    const spies = (["txn", "range", "watch"] as const).map((name) => vi.spyOn(EtcdRpc.prototype, name));
    const calls = () => spies.reduce((n, spy) => n + spy.mock.calls.length, 0);
    const opened = async (setting: string) => {
      const before = process.env.BYTESEEK_FAST;
      process.env.BYTESEEK_FAST = setting;
      try {
        return await createEtcdTree({ endpoints: etcd.endpoints, prefix: `lanes-${setting}/` });
      } finally {
        if (before === undefined) delete process.env.BYTESEEK_FAST;
        else process.env.BYTESEEK_FAST = before;
      }
    };
    const reference = await opened("0");
    try {
      await reference.set("/a/b", { kind: "int64", value: 9007199254740993n });
      expect(await reference.get("/a/b")).toMatchObject({
        value: { kind: "int64", value: 9007199254740993n },
      });
      expect((await reference.list("/a/")).children.map((c) => c.name)).toEqual(["b"]);
      expect(calls()).toBe(0);
    } finally {
      await reference.close();
    }
    const fast = await opened("1");
    try {
      await fast.set("/a/b", { kind: "int64", value: 1n });
      expect(calls()).toBeGreaterThan(0);
    } finally {
      await fast.close();
      vi.restoreAllMocks();
    }
  });
});

describe("the answer size cap", () => {
  it("refuses an answer over the cap as RESOURCE_EXHAUSTED, naming the cap", async () => {
    const big = frame(Buffer.alloc(2000, 1));
    const err = await failure(callFake(answer(big), { maxAnswerBytes: 1024 }));
    expect(err).toBeInstanceOf(GRPCResourceExhastedError);
    expect(err.message).toMatch(/is 2000 bytes, over the cap of 1024: ask for less/);
    // The same answer under a cap it fits in is read.
    expect((await callFake(answer(big), { maxAnswerBytes: 2000 })).length).toBe(2000);
  });

  it("refuses a frame declaring more than the cap as soon as its prefix arrives", async () => {
    const err = await failure(
      callFake(
        (stream) => {
          stream.respond({ ":status": 200, "content-type": "application/grpc" });
          // Declares 3 GiB and never sends it: waiting for it would end only at the deadline.
          stream.write(frame(Buffer.alloc(10), 3 * 1024 ** 3));
        },
        {},
        20_000,
      ),
    );
    expect(err).toBeInstanceOf(GRPCResourceExhastedError);
    expect(err.message).toContain(`over the cap of ${DEFAULT_MAX_ANSWER_BYTES}`);
    expect(DEFAULT_MAX_ANSWER_BYTES).toBe(64 * 1024 * 1024);
  });
});

describe("keepalive", () => {
  const quick = { keepaliveMs: 50, keepaliveTimeoutMs: 1000 };

  it("ends a session whose member never answers a ping: the call fails as UNAVAILABLE, long before its deadline", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const transport = createH2Transport(quick);
    try {
      const { port } = silent.address() as AddressInfo;
      const err = await failure(
        transport.call(member(`127.0.0.1:${port}`), RANGE, encodeRangeRequest({ key: "k" }), {}, 25_000),
      );
      expect(err).toBeInstanceOf(GRPCUnavailableError);
      expect(err.message).toMatch(/did not answer a keepalive ping within 1000 ms/);
      expect(isEtcdFailure(err)).toBe(true);
    } finally {
      transport.close();
      silent.close();
    }
  });

  it("keeps a call whose member is slow but answers its pings", async () => {
    let pings = 0;
    const got = await callFake(
      (stream) => {
        // The answer comes only after three pings, each answered: the session must outlive them.
        const session = stream.session!;
        session.on("ping", () => {
          if (++pings === 3) answer(frame(EMPTY_RANGE_AT_7))(stream);
        });
      },
      quick,
      25_000,
    );
    expect(decodeRangeResponse(got).header.revision).toBe(7);
    expect(pings).toBeGreaterThanOrEqual(3);
  });

  it("fails a call over to the next member once the silent one's session is ended", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const { port } = silent.address() as AddressInfo;
    const rpc = new EtcdRpc({
      endpoints: [`127.0.0.1:${port}`, etcd.endpoints[0]!],
      callTimeoutMs: 25_000,
      ...quick,
    });
    try {
      // Calls start from a random member: call until one lands on the silent member.
      let failed: Error | undefined;
      for (let i = 0; i < 30 && !failed; i++) {
        try {
          await rpc.range({ key: "k" });
        } catch (err) {
          failed = err as Error;
        }
      }
      expect(failed).toBeInstanceOf(GRPCUnavailableError);
      expect(failed?.message).toMatch(/keepalive ping/);
      // The silent member is skipped now: the next call is answered by etcd.
      expect((await rpc.range({ key: "k" })).header.revision).toBeGreaterThan(0);
    } finally {
      rpc.close();
      silent.close();
    }
  });
});
