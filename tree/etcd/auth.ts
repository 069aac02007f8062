/**
 * Logging in to an etcd that has auth enabled (`etcdctl auth enable`): the user and password the
 * settings give (BYTESEEK_ETCD_USER, BYTESEEK_ETCD_PASSWORD) are traded for a token with
 * `Auth/Authenticate`, and every call carries it as its `token` metadata. etcd3 does this for its
 * own calls (and for the reference lane); the fast lane (rpc.ts) does it on its own connections,
 * with these two messages written by hand as wire.ts writes the others (rpc.proto's
 * AuthenticateRequest {name = 1, password = 2} and AuthenticateResponse {header = 1, token = 2}).
 */
import { EtcdWireError } from "./errors.js";

/** The etcd user the tree logs in as. */
export interface EtcdAuth {
  username: string;
  password: string;
}

export const AUTHENTICATE = "/etcdserverpb.Auth/Authenticate";

function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n >= 128) {
    bytes.push((n % 128) | 128);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

function field(tag: number, text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  return Buffer.concat([Buffer.from([tag]), varint(bytes.length), bytes]);
}

export function encodeAuthenticateRequest(auth: EtcdAuth): Buffer {
  return Buffer.concat([field(0x0a, auth.username), field(0x12, auth.password)]);
}

const malformed = (what: string) =>
  new EtcdWireError("ETCD_WIRE_MALFORMED", `etcd's answer is not a well-formed message: ${what}`);

/** AuthenticateResponse {header = 1 (a message), token = 2 (a string)}: both length-delimited. */
const RESPONSE = { 1: 2, 2: 2 };
/** ResponseHeader {cluster_id = 1, member_id = 2, revision = 3, raft_term = 4}: varints. */
const HEADER = { 1: 0, 2: 0, 3: 0, 4: 0 };

/** A token is text: bytes that are not UTF-8 are refused, never read with replacement characters. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Steps over the fields of `buf` from `start` to `end`, handing each length-delimited one to
 * `bytes` (its tag, where its bytes begin and end). Refuses what is not a well-formed message:
 * field number 0, groups and unknown wire types, a varint or a field running past the end, and a
 * field `known` names (number: wire type) of another wire type (protobufjs would read it as its own).
 */
function eachField(
  buf: Buffer,
  start: number,
  end: number,
  known: Readonly<Record<number, number>>,
  bytes: (tag: number, from: number, to: number) => void = () => {},
): void {
  let pos = start;
  /** A varint of at most `bytes` bytes; a tag or a length (5) is below 2^32, as protobufjs reads them. */
  const readVarint = (bytes: 5 | 10): number => {
    let n = 0;
    for (let scale = 1, i = 0; i < bytes; i++, scale *= 128) {
      if (pos >= end) throw malformed("a varint runs past the end");
      const b = buf[pos++] as number;
      n += (b & 127) * scale;
      if (b < 128) {
        if (bytes === 5 && n > 0xffffffff) throw malformed("a 32-bit varint above 2^32 - 1");
        return n;
      }
    }
    throw malformed(`a varint of more than ${bytes} bytes`);
  };
  const skip = (n: number) => {
    if (pos + n > end) throw malformed("a field runs past its message");
    pos += n;
  };
  while (pos < end) {
    const tag = readVarint(5);
    if (tag < 8) throw malformed("field number 0");
    const wire = tag % 8;
    const number = Math.floor(tag / 8);
    const expected = known[number];
    if (expected !== undefined && wire !== expected) throw malformed(`field ${number} of wire type ${wire}`);
    if (wire === 0) readVarint(10);
    else if (wire === 1) skip(8);
    else if (wire === 5) skip(4);
    else if (wire === 2) {
      const len = readVarint(5);
      const from = pos;
      skip(len);
      bytes(tag, from, pos);
    } else throw malformed(`wire type ${wire}`);
  }
}

/**
 * The token of an AuthenticateResponse. Its header is checked to be a well-formed message and
 * otherwise stepped over, as are fields this version does not know.
 */
export function decodeAuthenticateResponse(buf: Buffer): string {
  let token: string | undefined;
  eachField(buf, 0, buf.length, RESPONSE, (tag, from, to) => {
    if (tag === 0x0a) eachField(buf, from, to, HEADER);
    else if (tag === 0x12) {
      try {
        token = UTF8.decode(buf.subarray(from, to));
      } catch {
        throw malformed("a token that is not UTF-8");
      }
    }
  });
  if (token === undefined || token === "") throw malformed("an Authenticate answer without a token");
  return token;
}
