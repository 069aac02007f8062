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

/** The token of an AuthenticateResponse (its header and any other field stepped over). */
export function decodeAuthenticateResponse(buf: Buffer): string {
  let pos = 0;
  let token: string | undefined;
  const readVarint = (): number => {
    let n = 0;
    for (let scale = 1, i = 0; i < 10; i++, scale *= 128) {
      const b = buf[pos++];
      if (b === undefined) throw malformed("a varint runs past the end");
      n += (b & 127) * scale;
      if (b < 128) return n;
    }
    throw malformed("a varint of more than 10 bytes");
  };
  while (pos < buf.length) {
    const tag = readVarint();
    const wire = tag & 7;
    if (wire === 0) readVarint();
    else if (wire === 2) {
      const len = readVarint();
      if (pos + len > buf.length) throw malformed("a field runs past its message");
      if (tag === 0x12) token = buf.toString("utf8", pos, pos + len);
      pos += len;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw malformed(`wire type ${wire}`);
  }
  if (pos !== buf.length) throw malformed("a field runs past its message");
  if (token === undefined || token === "") throw malformed("an Authenticate answer without a token");
  return token;
}
