/**
 * A 2025-era stdio MCP server that keeps the roots it is told (test/fixtures/mcp-roots-server.mjs,
 * on the 2025 SDK), started through the sandbox as every stdio upstream is: it holds the roots of
 * the run it last asked for, so a call of a run with other roots first tells it they changed.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setPolicy } from "../tools/helpers.js";
import { type McpHarness, mcpHarness, TEST_INSTALL } from "./helpers.js";

const FIXTURE = resolve(import.meta.dirname, "..", "fixtures", "mcp-roots-server.mjs");

let h: McpHarness;
beforeAll(async () => {
  h = await mcpHarness();
  await setPolicy(h.tree, {
    grants: {
      default: { read: true, write: true, exec: true, model: false, net: [], tree: ["/"] },
      runs: [{ vid: "nofiles*", grant: { read: false, write: false } }],
    },
  } as never);
  await h.register("keeper", { command: [process.execPath, FIXTURE], readOnlyPaths: TEST_INSTALL });
  const [report] = await h.mcp.sync("keeper");
  expect(report?.ok, report?.error).toBe(true);
});
afterAll(() => h.dispose());

async function rootsSeen(vid: string): Promise<string> {
  const r = await h.runtime.call("keeper.roots", {}, { vid });
  expect(r.kind, r.text).toBe("ok");
  return r.text;
}

describe("the roots a 2025 stdio upstream keeps", () => {
  it("are the calling run's: told of a change (notifications/roots/list_changed) when a run with other roots calls, asked again, never another run's", async () => {
    const workspace = pathToFileURL(h.workspace).href;
    // it asked once initialized, outside any call: byteseek names no run's roots then
    expect(await rootsSeen("files1")).toBe(`roots=${workspace} asked=2`);
    // the same run's roots: nothing to tell
    expect(await rootsSeen("files2")).toBe(`roots=${workspace} asked=2`);
    // a run that may not touch files has none; the server is told and asks again
    expect(await rootsSeen("nofiles1")).toBe("roots= asked=3");
    expect(await rootsSeen("files3")).toBe(`roots=${workspace} asked=4`);
    const status = (await h.mcp.list()).find((s) => s.server === "keeper");
    expect(status?.transport).toBe("stdio");
  });
});
