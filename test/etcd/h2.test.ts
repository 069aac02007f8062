/**
 * The unary calls' own HTTP/2 wire (tree/etcd/h2.ts) answers failures as grpc-js did, so the tree
 * tells an unreachable member, a silent one and etcd's own refusals apart exactly as before: each
 * against a real listener (etcd, a closed port, a socket that never answers).
 */
import { createServer, type Server } from "node:net";
import { castGrpcError, GRPCDeadlineExceededError, GRPCUnavailableError, isRecoverableError } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isEtcdFailure } from "../../tree/etcd/client.js";
import { createH2Transport, type Member } from "../../tree/etcd/h2.js";
import { decodeRangeResponse, encodeRangeRequest } from "../../tree/etcd/wire.js";
import { type EtcdCluster, freePort, startEtcd } from "./etcd-process.js";

let etcd: EtcdCluster;
const h2 = createH2Transport();
const plain = { _isSecure: () => false };
const member = (host: string): Member => ({ host, channelCredentials: plain });
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
