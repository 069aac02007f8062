import { mkdtempSync, rmSync } from "node:fs";
import { createSecureServer, type ServerHttp2Session, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { castGrpcError, GRPCUnavailableError, isRecoverableError } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isEtcdFailure } from "../../tree/etcd/client.js";
import { createH2Transport, type EtcdTls, type H2Options } from "../../tree/etcd/h2.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import { readEtcdTls } from "../../tree/etcd/tls.js";
import { decodeRangeResponse, encodeRangeRequest } from "../../tree/etcd/wire.js";
import { isTreeError, openTree, resolveStore } from "../../tree/index.js";
import { str } from "../../tree/value.js";
import { makeCertificates } from "../helpers/certificates.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

const dir = mkdtempSync(join(tmpdir(), "byteseek-tls-"));
const file = (name: string) => join(dir, name);
makeCertificates(dir, [
  { name: "member", ca: "ca", altNames: "IP:127.0.0.1", usage: "serverAuth,clientAuth" },
]);
const material = (files: { ca?: string; cert?: string; key?: string }): EtcdTls => readEtcdTls(files);
const CA = file("ca.pem");
const OTHER_CA = file("other-ca.pem");
const CERT = file("member.pem");
const KEY = file("member.key");

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An empty range at revision 7, framed as gRPC frames it. */
const ANSWER = Buffer.from([0, 0, 0, 0, 4, 0x0a, 0x02, 0x18, 0x07]);

/** A local HTTP/2 member over TLS that answers every call with ANSWER; `clientCa`: it asks for a client certificate. */
async function tlsMember(clientCa?: string): Promise<{ host: string; close(): Promise<void> }> {
  const server = createSecureServer({
    ...material({ cert: CERT, key: KEY }),
    ...(clientCa ? { ca: material({ ca: clientCa }).ca, requestCert: true, rejectUnauthorized: true } : {}),
  });
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (s: ServerHttp2Session) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream: ServerHttp2Stream) => {
    stream.resume();
    stream.on("error", () => {});
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(ANSWER);
  });
  server.on("tlsClientError", () => {}); // a client this member refuses
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
}

/** One Range call on `host` over TLS with `options`: the revision answered, or the error as etcd3 types it. */
async function rangeOn(host: string, options: H2Options): Promise<number | Error> {
  const transport = createH2Transport({ secure: true, ...options });
  try {
    const answer = await transport.call(
      { host },
      "/etcdserverpb.KV/Range",
      encodeRangeRequest({ key: "k" }),
      {},
      5000,
    );
    return decodeRangeResponse(answer).header.revision;
  } catch (err) {
    return castGrpcError(err as Error);
  } finally {
    transport.close();
  }
}

describe("unary calls to an https member", () => {
  it("reach a member whose certificate the given CA signed", async () => {
    const member = await tlsMember();
    try {
      expect(await rangeOn(member.host, { tls: material({ ca: CA }) })).toBe(7);
    } finally {
      await member.close();
    }
  });

  it("refuse a member whose certificate no trusted CA signed, saying to give BYTESEEK_ETCD_CA", async () => {
    const member = await tlsMember();
    try {
      for (const options of [{}, { tls: material({ ca: OTHER_CA }) }]) {
        const err = await rangeOn(member.host, options);
        expect(err).toBeInstanceOf(GRPCUnavailableError);
        expect((err as Error).message).toMatch(
          /etcd member 127\.0\.0\.1:\d+'s TLS certificate was refused \(.+\): give the CA that signed it \(BYTESEEK_ETCD_CA\)/,
        );
      }
    } finally {
      await member.close();
    }
  });

  it("present the client certificate a member asks for, and are refused by it without one", async () => {
    const member = await tlsMember(CA);
    try {
      expect(await rangeOn(member.host, { tls: material({ ca: CA, cert: CERT, key: KEY }) })).toBe(7);
      const err = await rangeOn(member.host, { tls: material({ ca: CA }) });
      expect(isEtcdFailure(err)).toBe(true);
      expect(isRecoverableError(err as Error)).toBe(true);
    } finally {
      await member.close();
    }
  });
});

/** The TREE_INVALID_OPTION error `fn` throws (or rejects with). */
async function refusal(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    expect(isTreeError(err, "TREE_INVALID_OPTION")).toBe(true);
    return err as Error;
  }
  throw new Error("expected TREE_INVALID_OPTION, but it went through");
}

describe("the TLS settings", () => {
  it("give an etcd store its TLS files, resolved against the working folder, and its answer cap", () => {
    expect(
      resolveStore(
        {
          KVSPACE: "etcd://h1",
          BYTESEEK_ETCD_CA: "ca.pem",
          BYTESEEK_ETCD_CERT: "/etc/c.pem",
          BYTESEEK_ETCD_KEY: "/etc/c.key",
          BYTESEEK_ETCD_MAX_ANSWER: "16m",
        },
        "/srv",
      ),
    ).toMatchObject({
      backend: "etcd",
      tls: { ca: "/srv/ca.pem", cert: "/etc/c.pem", key: "/etc/c.key" },
      maxAnswerBytes: 16 * 1024 * 1024,
    });
    expect(resolveStore({ KVSPACE: "etcd://h1" })).not.toHaveProperty("tls");
  });

  it("are refused at start when misplaced, half given, unreadable or not a certificate and its key", async () => {
    expect(
      (await refusal(() => resolveStore({ KVSPACE: "etcd://h1", BYTESEEK_ETCD_CERT: CERT }))).message,
    ).toBe(
      "BYTESEEK_ETCD_CERT and BYTESEEK_ETCD_KEY go together (a client certificate and its key); set both, or neither",
    );
    expect((await refusal(() => resolveStore({ KVSPACE: "./data", BYTESEEK_ETCD_CA: CA }))).message).toMatch(
      /^BYTESEEK_ETCD_CA does not apply to a store on classic/,
    );
    const open = (tls: { ca?: string; cert?: string; key?: string }) =>
      openTree({ backend: "etcd", endpoints: ["127.0.0.1:1"], tls });
    expect((await refusal(() => open({ ca: file("missing.pem") }))).message).toBe(
      `BYTESEEK_ETCD_CA=${file("missing.pem")} cannot be read (ENOENT); give the PEM file of the CA that signed the etcd members' certificates`,
    );
    expect((await refusal(() => open({ ca: KEY }))).message).toMatch(
      /^BYTESEEK_ETCD_CA=.* holds no PEM certificate/,
    );
    // The other CA's key is not the member certificate's.
    expect((await refusal(() => open({ ca: CA, cert: CERT, key: file("other-ca.key") }))).message).toMatch(
      /^the etcd TLS files do not make a TLS context \(.+\); BYTESEEK_ETCD_CA, BYTESEEK_ETCD_CERT and BYTESEEK_ETCD_KEY must be PEM files/,
    );
    expect(
      (await refusal(() => openTree({ backend: "etcd", endpoints: ["http://127.0.0.1:1"], tls: { ca: CA } })))
        .message,
    ).toMatch(/TLS settings are given, so every member is reached over https; drop the http:\/\/ ones/);
  });
});

describe("a tree on etcd serving clients over TLS, with client certificates", () => {
  let etcd: EtcdCluster;
  beforeAll(async () => {
    etcd = await startEtcd({ tls: { cert: CERT, key: KEY, clientCa: CA } });
  }, 60_000);
  afterAll(async () => {
    await etcd?.remove();
  });

  it("writes, reads through etcd and follows the watch with the CA, certificate and key given", async () => {
    const tree = await openTree({
      backend: "etcd",
      endpoints: etcd.endpoints,
      prefix: "tls/",
      tls: { ca: CA, cert: CERT, key: KEY },
      cacheBytes: 0,
    });
    try {
      const seen = (async () => {
        for await (const batch of tree.watch("/"))
          if (batch.events.some((e) => e.key === "/b")) return batch.rev;
        return 0;
      })();
      const { rev } = await tree.set("/a", str("over TLS"));
      expect(await tree.get("/a")).toMatchObject({ value: str("over TLS"), modRev: rev });
      const b = await tree.set("/b", str("watched"));
      expect(await seen).toBe(b.rev);
    } finally {
      await tree.close();
    }
  });

  it("is refused at start without the CA, the message naming BYTESEEK_ETCD_CA", async () => {
    const err = await createEtcdTree({
      endpoints: etcd.endpoints.map((e) => `https://${e}`),
      prefix: "tls/",
      unavailableAfterMs: 500,
    }).then(
      (t) => t.close().then(() => undefined),
      (e: unknown) => e as Error,
    );
    expect(isTreeError(err, "TREE_UNAVAILABLE")).toBe(true);
    expect(err?.message).toMatch(/BYTESEEK_ETCD_CA/);
  });
});
