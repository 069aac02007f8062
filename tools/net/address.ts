import { isIP } from "node:net";
import { networkInterfaces } from "node:os";

/**
 * What an IP address is when it is not an ordinary public one: loopback, private, link-local…
 * These are the addresses a wildcard `net` entry never reaches (host-rules.ts). IPv6 forms that
 * carry an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by the IPv4 address they carry.
 */
export function specialRange(address: string): string | undefined {
  const ip = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const family = isIP(ip);
  if (family === 4) return v4Range(v4Bytes(ip));
  if (family === 6) return v6Range(v6Bytes(ip));
  return undefined;
}

/** Is `address` one of this machine's own (any interface, loopback included)? */
export function isOwnAddress(address: string, own: readonly string[] = ownAddresses()): boolean {
  const key = canonical(address);
  return key !== undefined && own.some((a) => canonical(a) === key);
}

/** How long a reading of the machine's interfaces is used: reading them costs ~0.15 ms, an http call's own time. */
const OWN_ADDRESSES_MS = 1000;
let read: { at: number; addresses: string[] } | undefined;

/**
 * Every address of this machine's interfaces, read at most once a second (interfaces come and
 * go, but not at a caller's bidding: nothing a run does adds one between a check and its request).
 */
export function ownAddresses(): string[] {
  const now = Date.now();
  if (read === undefined || now - read.at >= OWN_ADDRESSES_MS || now < read.at)
    read = {
      at: now,
      addresses: Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)),
    };
  return read.addresses;
}

/** A comparable form: IPv4 dotted, IPv6 as 16 bytes in hex, an IPv4-mapped IPv6 as its IPv4. */
function canonical(address: string): string | undefined {
  const ip = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const family = isIP(ip);
  if (family === 4) return v4Bytes(ip).join(".");
  if (family !== 6) return undefined;
  const b = v6Bytes(ip);
  if (b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return b.slice(12).join(".");
  return Buffer.from(b).toString("hex");
}

type Range4 = [prefix: number[], bits: number, label: string];

const V4: Range4[] = [
  [[0], 8, "unspecified (0.0.0.0/8)"],
  [[10], 8, "private (10.0.0.0/8)"],
  [[100, 64], 10, "shared CGNAT (100.64.0.0/10)"],
  [[127], 8, "loopback (127.0.0.0/8)"],
  [[169, 254], 16, "link-local (169.254.0.0/16)"],
  [[172, 16], 12, "private (172.16.0.0/12)"],
  [[192, 0, 0], 24, "IETF reserved (192.0.0.0/24)"],
  [[192, 168], 16, "private (192.168.0.0/16)"],
  [[198, 18], 15, "benchmarking (198.18.0.0/15)"],
  [[224], 4, "multicast (224.0.0.0/4)"],
  [[240], 4, "reserved (240.0.0.0/4, broadcast included)"],
];

function v4Range(b: number[]): string | undefined {
  for (const [prefix, bits, label] of V4) if (inPrefix(b, prefix, bits)) return label;
  return undefined;
}

function v6Range(b: number[]): string | undefined {
  const zeros = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeros(16)) return "unspecified (::)";
  if (zeros(15) && b[15] === 1) return "loopback (::1)";
  const carried = (from: number, what: string) => {
    const inner = v4Range(b.slice(from, from + 4));
    return inner === undefined ? undefined : `${what} of ${b.slice(from, from + 4).join(".")}, ${inner}`;
  };
  if (zeros(10) && b[10] === 0xff && b[11] === 0xff) return carried(12, "IPv4-mapped form");
  if (zeros(12)) return carried(12, "IPv4-compatible form");
  if (inPrefix(b, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96)) return carried(12, "NAT64 form");
  if (inPrefix(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return "local-use NAT64 (64:ff9b:1::/48)";
  if (inPrefix(b, [0x20, 0x02], 16)) return carried(2, "6to4 form");
  if (inPrefix(b, [0x01, 0x00, 0, 0, 0, 0, 0, 0], 64)) return "discard-only (100::/64)";
  if (inPrefix(b, [0xfc], 7)) return "unique local (fc00::/7)";
  if (inPrefix(b, [0xfe, 0x80], 10)) return "link-local (fe80::/10)";
  if (inPrefix(b, [0xfe, 0xc0], 10)) return "site-local (fec0::/10)";
  if (inPrefix(b, [0xff], 8)) return "multicast (ff00::/8)";
  return undefined;
}

function inPrefix(bytes: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const take = Math.min(8, bits - i * 8);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The four bytes of a dotted IPv4 address (net.isIP has accepted it). */
function v4Bytes(ip: string): number[] {
  return ip.split(".").map(Number);
}

/** The sixteen bytes of an IPv6 address (net.isIP has accepted it; a trailing dotted IPv4 is allowed). */
function v6Bytes(ip: string): number[] {
  let text = ip;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    tail.push(...v4Bytes(dotted[1]));
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const groups = (s: string) => (s === "" ? [] : s.split(":").map((g) => Number.parseInt(g, 16)));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}
