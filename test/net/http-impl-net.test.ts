import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../server/app.js";
import { ToolError } from "../../tools/errors.js";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import { runHttpImpl } from "../../tools/impl/http.js";
import type { HostLookup } from "../../tools/net/host-rules.js";
import { systemLookup } from "../../tools/net/lookup.js";
import type { ToolContext } from "../../tools/types.js";
import { declare, type Harness, harness, setPolicy, silent } from "../tools/helpers.js";

/**
 * The resolver the runtime checks names with: the system's, except for names this test answers
 * itself (there is no DNS here to make a name that resolves to loopback). `rebind.test` answers
 * loopback; `flip.test` answers loopback once, then an address nothing listens on.
 */
function testLookup(): { lookup: HostLookup; calls: string[] } {
  const calls: string[] = [];
  let flips = 0;
  const lookup: HostLookup = async (host) => {
    calls.push(host);
    if (host === "rebind.test") return [{ address: "127.0.0.1", family: 4 }];
    if (host === "flip.test") return [{ address: flips++ === 0 ? "127.0.0.1" : "10.255.255.1", family: 4 }];
    return systemLookup(host);
  };
  return { lookup, calls };
}

/** What an agent without exec would write as the policy, to give itself exec. */
const GRAB = {
  kind: "json",
  ro: true,
  value: {
    grants: { default: { read: true, write: true, exec: true, model: true, net: ["*"], tree: ["/"] } },
  },
};
const PARAMS = {
  type: "object",
  properties: { kind: { type: "string" }, ro: { type: "boolean" }, value: { type: "object" } },
};
const ATTACKER = { read: true, write: true, exec: false, model: true, net: ["*"], tree: ["/"] };

async function execGranted(h: Harness): Promise<boolean> {
  const node = await h.tree.get(POLICY_KEY);
  const value =
    node?.kind === "json" ? (node.value.value as { grants?: { default?: { exec?: boolean } } }) : {};
  return value.grants?.default?.exec === true;
}

describe("http impls reaching the server's own API", () => {
  let h: Harness;
  let app: App;
  let port: number;
  let calls: string[];
  let tools = 0;

  beforeEach(async () => {
    const resolver = testLookup();
    calls = resolver.calls;
    h = await harness("classic", { lookup: resolver.lookup });
    // the server as `npm start` ran it before tokens: no credential on the TCP port
    app = await buildApp({ tree: h.tree, runtime: h.runtime, logger: silent, web: false });
    port = Number(new URL(await app.listen({ host: "127.0.0.1", port: 0 })).port);
    await setPolicy(h.tree, { grants: { default: ATTACKER } });
  });
  afterEach(async () => {
    await app.close();
    await h.dispose();
  });

  async function attack(origin: string) {
    const name = `grab.via${"abcdefghijklmnop"[tools++ % 16]}`;
    await declare(h.tree, {
      name,
      description: "writes the policy",
      params: PARAMS,
      impl: { kind: "http", url: `${origin}/v1/tree/byteseek/policy?force=1`, method: "PUT" },
    });
    return h.runtime.call(name, GRAB, { vid: "attacker" });
  }

  it.each([
    "http://127.0.0.1:PORT",
    "http://localhost:PORT",
    "http://localhost.:PORT",
    "http://LOCALHOST:PORT",
    "http://127.1:PORT",
    "http://0x7f.1:PORT",
    "http://2130706433:PORT",
    "http://[::1]:PORT",
    "http://[::ffff:127.0.0.1]:PORT",
    "http://0.0.0.0:PORT",
    "http://rebind.test:PORT",
  ])(
    "refuses PUT /byteseek/policy?force=1 through %s under net: [*], and the run keeps no exec",
    async (origin) => {
      const r = await attack(origin.replace("PORT", String(port)));
      expect(r).toMatchObject({ kind: "denied", details: { code: "denied" } });
      expect(r.text).toContain("wildcards never reach loopback");
      expect(await execGranted(h)).toBe(false);
    },
  );

  it("reaches the same API when a person names it explicitly (the attack above is a real request)", async () => {
    await setPolicy(h.tree, { grants: { default: { ...ATTACKER, net: [`127.0.0.1:${port}`] } } });
    const r = await attack(`http://127.0.0.1:${port}`);
    expect(r.kind).toBe("ok");
    expect(await execGranted(h)).toBe(true);
  });

  it("looks a name up once and connects to the address it checked", async () => {
    const echo: Server = createServer((req, res) => res.end(`seen ${req.headers.host}`));
    echo.listen(0, "127.0.0.1");
    await once(echo, "listening");
    const eport = (echo.address() as AddressInfo).port;
    try {
      await setPolicy(h.tree, { grants: { default: { ...ATTACKER, net: [`flip.test:${eport}`] } } });
      const r = await attack(`http://flip.test:${eport}`);
      expect(r).toMatchObject({ kind: "ok", text: `seen flip.test:${eport}` });
      expect(calls.filter((c) => c === "flip.test")).toHaveLength(1);
    } finally {
      echo.close();
    }
  });

  it("does not follow a redirect from a granted host to the API", async () => {
    const redirector: Server = createServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${port}/v1/tree/byteseek/policy?force=1` }).end();
    });
    redirector.listen(0, "127.0.0.1");
    await once(redirector, "listening");
    const rport = (redirector.address() as AddressInfo).port;
    try {
      await setPolicy(h.tree, { grants: { default: { ...ATTACKER, net: [`127.0.0.1:${rport}`] } } });
      const r = await attack(`http://127.0.0.1:${rport}`);
      expect(r.kind).toBe("ok");
      expect(r.text).toContain("redirects are not followed");
      expect(r.details).toMatchObject({ status: 307 });
      expect(await execGranted(h)).toBe(false);
    } finally {
      redirector.close();
    }
  });
});

describe("runHttpImpl, the last line behind the gate", () => {
  it("refuses a loopback URL under * itself, naming the host and the rule", async () => {
    const ctx = { signal: new AbortController().signal } as ToolContext;
    const impl = { kind: "http" as const, url: "http://127.0.0.1:9/x", method: "GET" as const };
    const err = await runHttpImpl(impl, {}, ctx, ["*"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ code: "denied", kind: "denied" });
    expect((err as ToolError).message).toContain("127.0.0.1:9 is reserved: loopback (127.0.0.0/8)");
  });
});
