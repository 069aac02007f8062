import { describe, expect, it } from "vitest";
import { annotationsOf, buildCatalogue } from "../../mcp/catalogue.js";
import { mapNames } from "../../mcp/names.js";
import { keyToUri, readable, uriToKey } from "../../mcp/resources.js";
import { clientVid, HOST_TEXT_LIMIT, toCallResult } from "../../mcp/server.js";
import type { ToolInfo } from "../../mcp/source.js";
import { parseDeclaration } from "../../tools/catalogue/declaration.js";
import { defaultPolicy } from "../../tools/gate/policy.js";

const tool = (name: string, extra: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  description: `the ${name} tool`,
  params: { type: "object", properties: {} },
  enabled: true,
  confirm: false,
  impl: "builtin",
  ref: name,
  ...extra,
});

describe("MCP tool names", () => {
  it("maps family.verb to family_verb and leaves out, deterministically, a second name mapping to the same", () => {
    const map = mapNames(["a_b.c", "a.b_c", "edit.read"]);
    expect(map.toMcp.get("edit.read")).toBe("edit_read");
    expect(map.toTree.get("a_b_c")).toBe("a.b_c");
    expect(map.leftOut).toEqual([{ name: "a_b.c", reason: '"a_b_c" is already the MCP name of a.b_c' }]);
    expect(mapNames(["a.b_c", "a_b.c"]).toTree.get("a_b_c")).toBe("a.b_c");
  });

  it("lists only enabled tools the policy does not block, in name order after the facades", () => {
    const cat = buildCatalogue([
      tool("z.last"),
      tool("edit.read"),
      tool("off.tool", { enabled: false }),
      tool("agent.shell", { blocked: "agent-written tools may not use impl kind shell" }),
    ]);
    expect(cat.tools.map((t) => t.name)).toEqual(["byteseek_find", "byteseek_call", "edit_read", "z_last"]);
  });
});

describe("MCP annotations", () => {
  it("derives read-only and destructive hints from the built-in a tool runs, and lets a declaration state its own", () => {
    expect(annotationsOf(tool("edit.grep"))).toMatchObject({ readOnlyHint: true });
    expect(annotationsOf(tool("my.alias", { ref: "edit.write" }))).toMatchObject({ destructiveHint: true });
    expect(annotationsOf(tool("x.cmd", { impl: "shell", ref: undefined }))).toMatchObject({
      destructiveHint: true,
      openWorldHint: true,
    });
    expect(
      annotationsOf(tool("tree.set", { title: "Write a key", annotations: { destructiveHint: false } })),
    ).toMatchObject({ title: "Write a key", destructiveHint: false });
  });

  it("accepts title and annotations in a declaration and refuses unknown hints", () => {
    const base = {
      name: "x.y",
      description: "d",
      params: { type: "object" },
      impl: { kind: "builtin", ref: "tree.get" },
    };
    expect(parseDeclaration({ ...base, title: "X", annotations: { readOnlyHint: true } }).ok).toBe(true);
    expect(parseDeclaration({ ...base, annotations: { fastHint: true } }).ok).toBe(false);
  });
});

describe("MCP results", () => {
  it("keeps a result under the hosts' 50,000 characters with byteseek's truncation marker", () => {
    const long = `${"x".repeat(99)}\n`.repeat(1000);
    const r = toCallResult({ kind: "ok", isError: false, text: long, details: {} });
    const text = (r.content[0] as { text: string }).text;
    expect(text.length).toBeLessThanOrEqual(HOST_TEXT_LIMIT);
    expect(text).toContain("[… truncated:");
    const short = toCallResult({ kind: "arg", isError: true, text: "bad", details: {}, record: "/r/0" });
    expect(short).toMatchObject({
      isError: true,
      _meta: { "byteseek/kind": "arg", "byteseek/record": "/r/0" },
    });
  });

  it("makes a client's name a valid run id", () => {
    expect(clientVid("Claude Code")).toBe("mcp-Claude-Code");
    expect(clientVid("../../etc")).toBe("mcp-..-..-etc");
    expect(clientVid(undefined)).toBe("mcp-client");
    expect(clientVid("x".repeat(300)).length).toBeLessThanOrEqual(128);
  });
});

describe("MCP resources", () => {
  it("names keys as byteseek://tree/ URIs and back, segments percent-encoded", () => {
    const key = "/byteseek/memory/a b?c";
    expect(keyToUri(key)).toBe("byteseek://tree/byteseek/memory/a%20b%3Fc");
    expect(uriToKey(keyToUri(key))).toBe(key);
    expect(uriToKey("file:///etc/passwd")).toBeUndefined();
  });

  it("keeps the policy, the model settings and the policy's denyKeys from being resources", () => {
    const loaded = { ok: true as const, policy: { ...defaultPolicy(), denyKeys: ["/secret/"] } };
    expect(readable("/byteseek/memory/x", loaded, "r")).toBe(true);
    expect(readable("/byteseek/policy", loaded, "r")).toBe(false);
    expect(readable("/byteseek/llm/key", loaded, "r")).toBe(false);
    expect(readable("/byteseek/llm/", loaded, "r")).toBe(false);
    expect(readable("/secret/a", loaded, "r")).toBe(false);
    expect(readable("/secret", loaded, "r")).toBe(false);
    expect(readable("/byteseek/memory/x", { ok: false, problems: ["bad"] }, "r")).toBe(false);
  });

  it("reads resources under the run's tree grant, as tree.get does", () => {
    const policy = defaultPolicy();
    const loaded = {
      ok: true as const,
      policy: {
        ...policy,
        grants: { ...policy.grants, runs: [{ vid: "narrow", grant: { tree: ["/notes/"] } }] },
      },
    };
    expect(readable("/notes/a", loaded, "narrow")).toBe(true);
    expect(readable("/byteseek/mcp/github", loaded, "narrow")).toBe(false);
    expect(readable("/byteseek/memory/x", loaded, "narrow")).toBe(false);
    expect(readable("/byteseek/mcp/github", loaded, "wide")).toBe(true);
  });
});
