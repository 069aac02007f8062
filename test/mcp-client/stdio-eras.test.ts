/**
 * The protocol era of a stdio upstream, asked on its own pipe: byteseek's own `byteseek mcp` (the
 * SDK's serveStdio: both eras) is spoken to in 2026-07-28; the SDK's plain stdio server
 * (test/fixtures/mcp-asking-server.mjs) answers server/discover -32601 and gets the 2025 handshake
 * on the same process, as does one silent on the probe once its probeTimeoutMs passes; a server that
 * exits on the probe is started once more, on 2025. Each runs
 * in the sandbox behind a shell that counts its starts in the workspace.
 */
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BYTESEEK_BIN } from "../mcp/helpers.js";
import { setPolicy } from "../tools/helpers.js";
import { type McpHarness, mcpHarness, TEST_INSTALL, until } from "./helpers.js";

const FIXTURES = resolve(import.meta.dirname, "..", "fixtures");

let h: McpHarness;
beforeAll(async () => {
  h = await mcpHarness();
  await setPolicy(h.tree, {
    // the default limits: Node's fetch (undici's WebAssembly parser, ~10 GiB of address space) runs under them
    grants: { default: { read: true, write: true, exec: true, model: true, net: [], tree: ["/"] } },
  });
});
afterAll(() => h.dispose());

/** A stdio entry whose every start appends a line to `<workspace>/<server>.starts` before `command` runs. */
function counted(server: string, command: string[], env: Record<string, string> = {}) {
  return {
    command: ["/bin/sh", "-c", 'echo start >> "$STARTS"; exec "$0" "$@"', ...command],
    env: { STARTS: join(h.workspace, `${server}.starts`), ...env },
    readOnlyPaths: TEST_INSTALL,
  };
}

async function starts(server: string): Promise<number> {
  const text = await readFile(join(h.workspace, `${server}.starts`), "utf8").catch(() => "");
  return text.split("\n").filter(Boolean).length;
}

async function synced(server: string) {
  const [report] = await h.mcp.sync(server);
  expect(report?.ok, report?.error).toBe(true);
  return (await h.mcp.list()).find((s) => s.server === server);
}

describe("the protocol era of a stdio upstream", () => {
  it("speaks 2026-07-28 with byteseek's own stdio server, one process, calls through it and follows its list changes", async () => {
    const store = join(h.workspace, "upstream-store");
    await h.register("own", {
      ...counted("own", [process.execPath, BYTESEEK_BIN, "mcp"], {
        KVSPACE: store,
        BYTESEEK_WORKSPACE: h.workspace,
        BYTESEEK_SYNC: "never",
      }),
      // its start counts in the probe's time: as long as the start may take, on a loaded machine
      probeTimeoutMs: 30_000,
    });
    const status = await synced("own");
    expect(status?.protocol).toBe("2026-07-28");
    expect(status?.toolNames).toContain("own.tree_get");
    const r = await h.runtime.call("own.tree_get", { key: "/byteseek/prompt/system" }, { vid: "eras1" });
    expect(r.kind, r.text).toBe("ok");
    expect(await starts("own")).toBe(1);
    // a tool declared in its tree changes its list: told on the 2026 listen stream, byteseek re-syncs
    const declared = await h.runtime.call(
      "own.tree_set",
      {
        key: "/byteseek/tools/demo.hello",
        value: {
          name: "demo.hello",
          description: "Reads the system prompt",
          params: { type: "object", properties: {} },
          impl: { kind: "builtin", ref: "tree.get" },
        },
      },
      { vid: "eras1" },
    );
    expect(declared.kind, declared.text).toBe("ok");
    await until(async () => (await h.decl("own.demo_hello")) !== undefined);
    expect((await h.mcp.list()).find((x) => x.server === "own")?.sync?.reason).toBe("list_changed");
  });

  it("falls back to 2025 on the same process with the SDK's stdio server, which answers server/discover -32601", async () => {
    await h.register("sdk", counted("sdk", [process.execPath, join(FIXTURES, "mcp-asking-server.mjs")]));
    const status = await synced("sdk");
    expect(status?.protocol).toMatch(/^2025-/);
    // a 2025 server asks for the roots with a request of its own, answered for the calling run
    const r = await h.runtime.call("sdk.roots", {}, { vid: "eras2" });
    expect(r.text).toBe(`roots=${pathToFileURL(h.workspace).href}`);
    expect(await starts("sdk")).toBe(1);
  });

  it("takes a server silent on the probe for a 2025 one once its probeTimeoutMs passes, not the start's timeout: initialize follows on the same process, its tools work, and its next start sends no probe", async () => {
    const methods = join(h.workspace, "quiet.methods");
    await h.register("quiet", {
      ...counted("quiet", [process.execPath, join(FIXTURES, "mcp-probe-server.mjs")], {
        SILENT_BEFORE_INIT: "1",
        METHODS: methods,
      }),
      // a start timeout longer than the test's: only the probe's own cap lets it through
      timeoutMs: 600_000,
      probeTimeoutMs: 100,
      // stopped once the sync is done: the call starts it again
      idleStopMs: 100,
    });
    const status = await synced("quiet");
    expect(status?.protocol).toMatch(/^2025-/);
    expect(status?.toolNames).toEqual(["quiet.run"]);
    await until(async () => (await h.mcp.list()).find((x) => x.server === "quiet")?.state === "stopped");
    const r = await h.runtime.call("quiet.run", { script: "echo quiet" }, { vid: "eras3" });
    expect(r.text).toBe("exit=0\nquiet\n");
    // the second start is known to be on 2025: no probe waited for again
    expect(await starts("quiet")).toBe(2);
    const asked = (await readFile(methods, "utf8")).split("\n").filter(Boolean);
    expect(asked).toEqual(["server/discover", "initialize", "tools/list", "initialize", "tools/call"]);
  });

  it("sends no probe to a server whose probeTimeoutMs is 0: 2025 at once", async () => {
    const methods = join(h.workspace, "plain.methods");
    await h.register("plain", {
      ...counted("plain", [process.execPath, join(FIXTURES, "mcp-probe-server.mjs")], { METHODS: methods }),
      probeTimeoutMs: 0,
    });
    const status = await synced("plain");
    expect(status?.protocol).toMatch(/^2025-/);
    expect((await readFile(methods, "utf8")).split("\n")[0]).toBe("initialize");
    expect(await readFile(methods, "utf8")).not.toContain("server/discover");
  });

  it("starts a server that exits on the probe once more, on 2025 without a probe, and later starts without one", async () => {
    await h.register("fussy", {
      ...counted("fussy", [process.execPath, join(FIXTURES, "mcp-probe-server.mjs")], {
        EXIT_BEFORE_INIT: "1",
      }),
      idleStopMs: 100,
    });
    const status = await synced("fussy");
    expect(status?.protocol).toMatch(/^2025-/);
    expect(status?.toolNames).toEqual(["fussy.run"]);
    expect(await starts("fussy")).toBe(2);
    // stopped when idle, it starts again on 2025 at once: one process, not one more to die of the probe
    await until(async () => (await h.mcp.list()).find((x) => x.server === "fussy")?.state === "stopped");
    const r = await h.runtime.call("fussy.run", { script: "echo again" }, { vid: "eras4" });
    expect(r.text).toBe("exit=0\nagain\n");
    expect(await starts("fussy")).toBe(3);
  });
});
