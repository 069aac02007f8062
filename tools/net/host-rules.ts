import { isIP } from "node:net";
import { isOwnAddress, ownAddresses, specialRange } from "./address.js";

/**
 * The host rules of the `net` power, one set for the egress proxy (commands) and for `http` impls
 * (the server): a request to a host is allowed only when an entry of the run's grant matches it.
 *
 * - `host` or `host:port` (an IP literal too, `[::1]:9` for IPv6) matches that host (on any port,
 *   or on that port); it is *explicit*: it may name loopback, a private address or this machine.
 * - `*.domain` matches names under domain, `*` any host: both are *wildcards*, and a wildcard
 *   never reaches loopback, link-local, private, CGNAT, unspecified or multicast addresses (IPv4 or
 *   IPv6, IPv4-mapped forms included), `localhost` and its subdomains, or this machine's own
 *   addresses — neither by name nor by what the name resolves to.
 *
 * Hosts are compared in the WHATWG URL parser's form, so `2130706433`, `0x7f.1`, `127.1`,
 * uppercase and trailing dots are all `127.0.0.1`/the plain name before any rule is applied.
 */
export interface NetTarget {
  /** Lowercase, no brackets, no trailing dot; IPv4 dotted, IPv6 as the URL parser writes it. */
  host: string;
  port: number;
}

/** One entry of a grant's `net`, parsed. */
export interface NetEntry {
  raw: string;
  kind: "any" | "suffix" | "host";
  /** The host (kind host) or the domain below which names match (kind suffix). */
  host: string;
  port?: number;
}

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 };

/** A host as the URL parser normalises it (see NetTarget), or undefined when it is not one. */
export function normaliseHost(raw: string): string | undefined {
  const text = raw.trim();
  if (text === "" || /[/?#@\s]/.test(text)) return undefined;
  const bracketed = isIP(text) === 6 ? `[${text}]` : text;
  let url: URL;
  try {
    url = new URL(`http://${bracketed}/`);
  } catch {
    return undefined;
  }
  if (url.port !== "") return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.+$/, "");
  return host === "" ? undefined : host;
}

/** The host and port a URL reaches (the scheme's default port when it names none). */
export function targetOfUrl(url: URL): NetTarget {
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.+$/, "");
  const port = url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0);
  return { host, port };
}

/** `host:port` as a CONNECT request names it (`[v6]:port` for IPv6), or undefined. */
export function targetOfAuthority(authority: string): NetTarget | undefined {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority.trim());
  if (!m?.[1] || !m[2]) return undefined;
  const port = Number(m[2]);
  const host = normaliseHost(m[1].replace(/^\[|\]$/g, ""));
  if (host === undefined || port < 1 || port > 65535) return undefined;
  return { host, port };
}

/** Parses one `net` entry; undefined when it names no host (it then matches nothing). */
export function parseEntry(raw: string): NetEntry | undefined {
  const text = raw.trim().toLowerCase();
  if (text === "*") return { raw, kind: "any", host: "" };
  if (text.startsWith("*.")) {
    const host = normaliseHost(text.slice(2));
    return host === undefined ? undefined : { raw, kind: "suffix", host };
  }
  const withPort = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(text);
  const host = normaliseHost((withPort?.[1] ?? text).replace(/^\[|\]$/g, ""));
  if (host === undefined) return undefined;
  return withPort?.[2] ? { raw, kind: "host", host, port: Number(withPort[2]) } : { raw, kind: "host", host };
}

/** Why a host is off limits to wildcards (a name or IP literal, before any lookup), or undefined. */
export function reservedHost(host: string, own: readonly string[] = ownAddresses()): string | undefined {
  if (host === "localhost" || host.endsWith(".localhost")) return "a loopback name (localhost)";
  if (isIP(host) === 0) return undefined;
  return specialRange(host) ?? (isOwnAddress(host, own) ? "one of this server's own addresses" : undefined);
}

/** The entry that lets `target` through by name: explicit entries first, then wildcards. */
export type NameVerdict = { ok: true; entry: NetEntry; explicit: boolean } | { ok: false; reason: string };

export function matchName(
  target: NetTarget,
  entries: readonly string[],
  own: readonly string[] = ownAddresses(),
): NameVerdict {
  const parsed = entries.map(parseEntry).filter((e): e is NetEntry => e !== undefined);
  const explicit = parsed.find(
    (e) => e.kind === "host" && e.host === target.host && (e.port ?? target.port) === target.port,
  );
  if (explicit) return { ok: true, entry: explicit, explicit: true };
  const wildcard = parsed.find(
    (e) => e.kind === "any" || (e.kind === "suffix" && target.host.endsWith(`.${e.host}`)),
  );
  if (!wildcard)
    return { ok: false, reason: `${display(target)} is not in this run's grant (net: ${listed(entries)})` };
  const reserved = reservedHost(target.host, own);
  if (reserved !== undefined) return { ok: false, reason: wildcardRefusal(target, wildcard, reserved) };
  return { ok: true, entry: wildcard, explicit: false };
}

/** Resolves a name to its addresses (all of them); the server's resolver by default. */
export type HostLookup = (host: string) => Promise<{ address: string; family: number }[]>;

export interface ResolveOptions {
  /** The resolver (lookup.ts's systemLookup in the server; tests may answer for a name). */
  lookup: HostLookup;
  /** This machine's addresses (read per check by default). */
  own?: () => readonly string[];
}

/** Where to connect: an address that was checked, for the caller to connect to and to nothing else. */
export type Resolved =
  | { ok: true; address: string; family: 4 | 6; entry: string }
  | { ok: false; code: "denied" | "unresolved"; reason: string };

/**
 * The whole check: the name against the entries, then (for a name) what it resolves to. A wildcard
 * match keeps only the addresses a wildcard may reach; the caller connects to the address returned,
 * never looks the name up again (a second answer could point elsewhere: DNS rebinding).
 */
export async function resolveTarget(
  target: NetTarget,
  entries: readonly string[],
  options: ResolveOptions,
): Promise<Resolved> {
  const own = (options.own ?? ownAddresses)();
  const verdict = matchName(target, entries, own);
  if (!verdict.ok) return { ok: false, code: "denied", reason: verdict.reason };
  let answers: { address: string; family: number }[];
  if (isIP(target.host) !== 0) answers = [{ address: target.host, family: isIP(target.host) }];
  else {
    try {
      answers = await options.lookup(target.host);
    } catch (err) {
      return {
        ok: false,
        code: "unresolved",
        reason: `${target.host} could not be resolved (${(err as Error).message}); check the host name`,
      };
    }
  }
  const first = answers[0];
  if (!first)
    return {
      ok: false,
      code: "unresolved",
      reason: `${target.host} resolved to no address; check the host name`,
    };
  if (verdict.explicit) return pick(first, verdict.entry);
  const fit = answers.find((a) => reservedHost(a.address, own) === undefined);
  if (fit) return pick(fit, verdict.entry);
  const why = reservedHost(first.address, own) ?? "reserved";
  return {
    ok: false,
    code: "denied",
    reason: wildcardRefusal(target, verdict.entry, `resolves to ${first.address}, ${why}`),
  };
}

function pick(answer: { address: string; family: number }, entry: NetEntry): Resolved {
  return { ok: true, address: answer.address, family: answer.family === 6 ? 6 : 4, entry: entry.raw };
}

function wildcardRefusal(target: NetTarget, entry: NetEntry, why: string): string {
  const example =
    isIP(target.host) === 6 ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  return `${display(target)} is ${why.startsWith("resolves") ? "" : "reserved: "}${why}. The grant's "${entry.raw}" is a wildcard, and wildcards never reach loopback, private, link-local or this server's own addresses; only an entry naming the host does (e.g. "${example}")`;
}

function display(target: NetTarget): string {
  return isIP(target.host) === 6 ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
}

function listed(entries: readonly string[]): string {
  if (entries.length === 0) return "none";
  const shown = entries.slice(0, 8).map((e) => JSON.stringify(e));
  return entries.length > 8 ? `${shown.join(", ")}, … ${entries.length - 8} more` : shown.join(", ");
}
