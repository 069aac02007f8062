import { describe, expect, it } from "vitest";
import { specialRange } from "../../tools/net/address.js";
import {
  type HostLookup,
  matchName,
  normaliseHost,
  resolveTarget,
  targetOfAuthority,
  targetOfUrl,
} from "../../tools/net/host-rules.js";

const OWN = ["127.0.0.1", "::1", "203.0.113.7"];
const own = () => OWN;
const at = (url: string) => targetOfUrl(new URL(url));
/** A resolver answering from a table, so names can point anywhere without DNS. */
const table =
  (answers: Record<string, string[]>): HostLookup =>
  async (host) => {
    const list = answers[host];
    if (!list) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

describe("host normalisation", () => {
  it("reads numeric, short, hex, uppercase and trailing-dot forms as the address or name they are", () => {
    expect(at("http://2130706433/").host).toBe("127.0.0.1");
    expect(at("http://0x7f.1/").host).toBe("127.0.0.1");
    expect(at("http://127.1/").host).toBe("127.0.0.1");
    expect(at("http://017700000001/").host).toBe("127.0.0.1");
    expect(at("http://127.0.0.1./").host).toBe("127.0.0.1");
    expect(at("http://LOCALHOST./").host).toBe("localhost");
    expect(at("http://[::FFFF:127.0.0.1]/").host).toBe("::ffff:7f00:1");
    expect(normaliseHost("Example.COM.")).toBe("example.com");
    expect(normaliseHost("a/b")).toBeUndefined();
    expect(targetOfAuthority("[::1]:443")).toEqual({ host: "::1", port: 443 });
    expect(targetOfAuthority("0x7f.1:80")).toEqual({ host: "127.0.0.1", port: 80 });
    expect(targetOfAuthority("example.com")).toBeUndefined();
  });

  it("puts the scheme's default port on a URL that names none", () => {
    expect(at("https://example.com/x")).toEqual({ host: "example.com", port: 443 });
    expect(at("http://example.com/x")).toEqual({ host: "example.com", port: 80 });
  });
});

describe("special address ranges", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private"],
    ["172.31.0.1", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "CGNAT"],
    ["169.254.169.254", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "link-local"],
    ["fd00::1", "unique local"],
    ["::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"],
    ["::ffff:7f00:1", "IPv4-mapped form of 127.0.0.1"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"],
    ["2002:7f00:1::", "6to4 form of 127.0.0.1"],
  ])("%s is %s", (ip, label) => {
    expect(specialRange(ip)).toContain(label);
  });

  it.each(["93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:93.184.216.34"])(
    "%s is an ordinary public address",
    (ip) => {
      expect(specialRange(ip)).toBeUndefined();
    },
  );
});

describe("matching a host by name", () => {
  it("matches an entry by name, by name and port, or by a wildcard subdomain", () => {
    expect(matchName(at("https://api.example.org/x"), ["api.example.org"], OWN).ok).toBe(true);
    expect(matchName(at("https://api.example.org/x"), ["api.example.org:443"], OWN).ok).toBe(true);
    expect(matchName(at("https://api.example.org:8443/x"), ["api.example.org:443"], OWN).ok).toBe(false);
    expect(matchName(at("https://a.b.example.org/"), ["*.example.org"], OWN).ok).toBe(true);
    expect(matchName(at("https://example.org.evil.com/"), ["*.example.org", "example.org"], OWN).ok).toBe(
      false,
    );
    expect(matchName(at("https://x.org/"), [], OWN).ok).toBe(false);
  });

  it.each([
    "http://127.0.0.1:7411/",
    "http://localhost:7411/",
    "http://LOCALHOST.:7411/",
    "http://127.1:7411/",
    "http://2130706433:7411/",
    "http://0x7f.1:7411/",
    "http://[::1]:7411/",
    "http://[::ffff:127.0.0.1]:7411/",
    "http://0.0.0.0:7411/",
    "http://169.254.169.254/",
    "http://10.0.0.1/",
    "http://203.0.113.7/",
    "http://api.localhost/",
  ])("* never matches %s", (url) => {
    const verdict = matchName(at(url), ["*"], OWN);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain("wildcards never reach loopback");
  });

  it("lets an explicit entry name loopback, in any spelling of the same address", () => {
    expect(matchName(at("http://127.0.0.1:8080/"), ["127.0.0.1:8080"], OWN).ok).toBe(true);
    expect(matchName(at("http://127.1:8080/"), ["127.0.0.1:8080"], OWN).ok).toBe(true);
    expect(matchName(at("http://127.0.0.1:8081/"), ["127.0.0.1:8080"], OWN).ok).toBe(false);
    expect(matchName(at("http://localhost./"), ["localhost"], OWN).ok).toBe(true);
    expect(matchName(at("http://[::1]:9/"), ["[::1]:9"], OWN).ok).toBe(true);
    expect(matchName(at("http://127.0.0.1/"), ["localhost"], OWN).ok).toBe(false);
  });
});

describe("resolving a host", () => {
  it("refuses a wildcard-matched name whose answer is loopback or private, and names the address", async () => {
    const lookup = table({ "rebind.example.com": ["127.0.0.1"], "lan.example.com": ["192.168.0.4"] });
    for (const host of ["rebind.example.com", "lan.example.com"]) {
      const r = await resolveTarget({ host, port: 80 }, ["*"], { lookup, own });
      expect(r).toMatchObject({ ok: false, code: "denied" });
      if (!r.ok) expect(r.reason).toMatch(/resolves to (127\.0\.0\.1|192\.168\.0\.4)/);
    }
  });

  it("refuses a name resolving to one of the server's own public addresses under *", async () => {
    const lookup = table({ "me.example.com": ["203.0.113.7"] });
    const r = await resolveTarget({ host: "me.example.com", port: 443 }, ["*.example.com"], { lookup, own });
    expect(r).toMatchObject({ ok: false, code: "denied" });
    if (!r.ok) expect(r.reason).toContain("this server's own addresses");
  });

  it("connects a wildcard match to a public address of the answer, skipping the reserved ones", async () => {
    const lookup = table({ "mixed.example.com": ["10.0.0.1", "93.184.216.34"] });
    const r = await resolveTarget({ host: "mixed.example.com", port: 443 }, ["*"], { lookup, own });
    expect(r).toEqual({ ok: true, address: "93.184.216.34", family: 4, entry: "*" });
  });

  it("lets an explicit name resolve to loopback, and connects to the address it checked", async () => {
    const lookup = table({ localhost: ["127.0.0.1"] });
    const r = await resolveTarget({ host: "localhost", port: 8080 }, ["localhost:8080"], { lookup, own });
    expect(r).toEqual({ ok: true, address: "127.0.0.1", family: 4, entry: "localhost:8080" });
  });

  it("reports a name that does not resolve as unresolved, not as denied", async () => {
    const r = await resolveTarget({ host: "nowhere.example.com", port: 80 }, ["*"], {
      lookup: table({}),
      own,
    });
    expect(r).toMatchObject({ ok: false, code: "unresolved" });
  });
});
