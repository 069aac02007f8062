/**
 * A stdio MCP server the client spawns is a hostile program like any command: it runs in the
 * sandbox of the policy's default grant (an entry a run wrote: that run's grant), sees the
 * workspace and the folders a person listed in `readOnlyPaths`, and nothing of the server — its
 * store folder and token, its socket, its TCP port, its /proc, a user's credentials. The probe
 * server (test/fixtures/mcp-probe-server.mjs) runs whatever bash script a test hands it.
 */
import { copyFile, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createMcpClient, type McpClient } from "../../tools/mcp/client.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createSandboxRunner } from "../../tools/sandbox/runner.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { json } from "../../tree/value.js";
import { setPolicy, silent } from "../tools/helpers.js";
import { SECRET } from "./harness.js";

const FIXTURE = resolve(import.meta.dirname, "..", "fixtures", "mcp-probe-server.mjs");

describe("a stdio MCP server runs in the sandbox of its grant", () => {
  let base: string;
  let ws: string;
  let outside: string;
  let lib: string;
  let store: string;
  let home: string;
  let tree: Tree;
  let mcp: McpClient;
  let runtime: Runtime;
  let port: number;
  const servers: Server[] = [];
  const entry = () => ({ command: [process.execPath, join(ws, "probe-server.mjs")] });

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "byteseek-mcp-sandbox-")));
    ws = join(base, "ws");
    outside = join(base, "outside");
    lib = join(base, "lib");
    store = join(ws, "store");
    home = join(ws, "home");
    await mkdir(join(home, ".ssh"), { recursive: true });
    await mkdir(store);
    await mkdir(outside);
    await mkdir(lib);
    await writeFile(join(home, ".ssh", "id_ed25519"), SECRET);
    await writeFile(join(store, "token"), SECRET, { mode: 0o600 });
    await writeFile(join(outside, "note.txt"), SECRET);
    await writeFile(join(lib, "install.txt"), "installed");
    await symlink(outside, join(ws, "out"));
    await copyFile(FIXTURE, join(ws, "probe-server.mjs"));
    // the server's share socket (in the store) and a TCP port of its own, both answering the secret
    const socket = createServer((c) => c.end(SECRET));
    await new Promise<void>((r) => socket.listen(join(store, "mcp.sock"), r));
    const tcp = createServer((c) => c.end(SECRET));
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
    port = (tcp.address() as { port: number }).port;
    servers.push(socket, tcp);

    tree = await openTree({ backend: "memory" });
    const builtins = createTreeTools();
    await seedTools({ tree, builtins });
    const env = { PATH: process.env.PATH, HOME: home, BYTESEEK_LLM_KEY: SECRET };
    mcp = createMcpClient({ tree, logger: silent, workspace: ws, env, hiddenPaths: [store] });
    runtime = createRuntime({
      tree,
      builtins,
      logger: silent,
      workspace: ws,
      mcp,
      hiddenPaths: [store],
      env,
    });
    await tree.set("/byteseek/mcp/probe", json({ ...entry(), readOnlyPaths: [lib] }));
    const [report] = await mcp.sync("probe");
    expect(report?.ok, report?.error).toBe(true);
  }, 30_000);
  afterAll(async () => {
    await mcp.close();
    await runtime.close();
    await tree.close();
    for (const s of servers) await new Promise((r) => s.close(r));
    await rm(base, { recursive: true, force: true });
  });

  /** Runs `script` in the probe server; answers what it printed (after `exit=<code>`). */
  async function probe(script: string, server = "probe"): Promise<string> {
    const r = await runtime.call(`${server}.run`, { script }, { vid: "r1" });
    expect(r.kind, r.text).toBe("ok");
    return r.text;
  }

  /** Every line of `script` failed, and nothing it printed holds the secret. */
  async function refusedEach(scripts: string[]): Promise<void> {
    for (const script of scripts) {
      const out = await probe(script);
      expect(out, script).toMatch(/exit=[1-9]/);
      expect(out, script).not.toContain(SECRET);
    }
  }

  it("still does what its grant allows: writes in the workspace, reads its readOnlyPaths", async () => {
    const out = await probe(`echo made > ${ws}/made.txt && cat ${lib}/install.txt`);
    expect(out).toContain("exit=0");
    expect(out).toContain("installed");
    expect(await readFile(join(ws, "made.txt"), "utf8")).toBe("made\n");
  });

  it("cannot read the store folder, its token or its socket", async () => {
    await refusedEach([
      `cat ${store}/token`,
      `ls ${store}`,
      `node -e 'require("net").connect(process.argv[1]).on("data", d => process.stdout.write(d)).on("error", () => process.exit(3))' ${store}/mcp.sock`,
    ]);
  });

  it("cannot reach the server's TCP port: no network without a grant", async () => {
    await refusedEach([`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`]);
  });

  it("cannot read the server's environment or memory, nor a planted ~/.ssh key", async () => {
    await refusedEach([
      `cat /proc/${process.pid}/environ`,
      `head -c 64 /proc/${process.pid}/mem`,
      `cat ${home}/.ssh/id_ed25519`,
      `kill -0 ${process.pid}`,
    ]);
  });

  it("cannot write outside its grant: outside the roots, through a workspace symlink, into its readOnlyPaths", async () => {
    await refusedEach([
      `echo x > ${outside}/w.txt`,
      `echo x > ${ws}/out/w.txt`,
      `echo x > ${lib}/w.txt`,
      `echo x > ${store}/w.txt`,
    ]);
    await expect(readFile(join(outside, "w.txt"))).rejects.toThrow();
    await expect(readFile(join(lib, "w.txt"))).rejects.toThrow();
  });

  it("an entry a run wrote gets no readOnlyPaths, and a run's write that sets them is refused", async () => {
    await tree.set("/byteseek/mcp/runprobe", json({ ...entry(), readOnlyPaths: [lib] }), { vid: "r1" });
    const [report] = await mcp.sync("runprobe");
    expect(report?.ok, report?.error).toBe(true);
    const out = await probe(`cat ${lib}/install.txt`, "runprobe");
    expect(out).toMatch(/exit=[1-9]/);
    expect(out).not.toContain("installed");

    const set = await runtime.call(
      "tree.set",
      { key: "/byteseek/mcp/other", value: { ...entry(), readOnlyPaths: ["/etc"], net: ["*"] } },
      { vid: "r1" },
    );
    expect(set.isError).toBe(true);
    expect(set.text).toMatch(/readOnlyPaths and net of an MCP server entry are a person's setting/);
    expect(await tree.get("/byteseek/mcp/other")).toBeUndefined();
  });

  it("is killed at the policy's memory cap, and the call it was in and its status say so", async () => {
    const MiB = 1024 ** 2;
    await setPolicy(tree, { limits: { residentBytes: 192 * MiB } });
    try {
      await tree.set("/byteseek/mcp/hog", json(entry()));
      const [report] = await mcp.sync("hog");
      expect(report?.ok, report?.error).toBe(true);
      // 256 MiB in its /tmp (memory, counted in the cap) that no process holds: every process of a
      // command is as likely a victim (oom_score_adj 1000), so the kernel kills the largest, the server
      const script = `head -c ${256 * MiB} /dev/zero > /tmp/fill; wc -c /tmp/fill`;
      const r = await runtime.call("hog.run", { script }, { vid: "r1" });
      expect(r.details.code, r.text).toBe("mcp_unavailable");
      expect(r.text).toMatch(
        /stopped during the call of run \(it was killed: out of memory \(cap 192 MiB .*limits\.residentBytes/,
      );
      const status = (await mcp.list()).find((x) => x.server === "hog");
      expect(status?.error).toMatch(/^it was killed: out of memory \(cap 192 MiB/);
    } finally {
      await tree.del("/byteseek/mcp/hog");
      await setPolicy(tree, {});
    }
  });

  it("fails closed: where the sandbox cannot be made, the server is not started", async () => {
    const runner = createSandboxRunner({ bwrap: join(base, "no-such-bwrap") });
    const closed = createMcpClient({ tree, logger: silent, workspace: ws, env: {}, sandbox: runner });
    try {
      const [report] = await closed.sync("probe");
      expect(report?.ok).toBe(false);
      expect(report?.error).toMatch(/sandbox.*unavailable.*bubblewrap is not installed/s);
      expect(report?.error).toMatch(/"sandbox": "off"/);
    } finally {
      await closed.close();
      await runner.close();
    }
  });
});
