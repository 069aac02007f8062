/**
 * Writes of tool declarations, the policy and MCP server entries through the server as
 * `startServer` (the composition root) wires it: one that does not validate is refused with its
 * problems and nothing is written, over PUT, txn, import and an agent's tree.set; `?unchecked=1`
 * stores it anyway, and the catalogue then reports it.
 */
import { join } from "node:path";
import pino from "pino";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../server/main.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { tempDir } from "./helpers.js";

const GOOD = {
  name: "text.wc",
  description: "count lines",
  snippet: "text.wc(path) — count lines",
  params: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  impl: { kind: "shell", argv: ["wc", "-l", "{path}"] },
};
/** Valid but for an empty argv and an unknown field. */
const BAD = { ...GOOD, impl: { kind: "shell", argv: [] }, snipet: "typo" };

let server: RunningServer;
let fake: FakeLlm;
let dir: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  dir = await tempDir("byteseek-checked-");
  fake = await startFakeLlm();
  server = await startServer({
    env: {
      KVSPACE: join(dir.path, "store"),
      BYTESEEK_PORT: "0",
      BYTESEEK_SYNC: "never",
      BYTESEEK_WORKSPACE: dir.path,
      BYTESEEK_LLM_API: "openai",
      BYTESEEK_LLM_URL: `${fake.url}/v1`,
      BYTESEEK_LLM_MODEL: "fake-1",
      BYTESEEK_LLM_MAX_RETRIES: "1",
      // about what is written, not the credential: --no-auth
      BYTESEEK_TOKEN: "",
    },
    noAuth: true,
    logger: pino({ level: "silent" }),
    handleSignals: false,
  });
});

afterAll(async () => {
  await server?.close();
  await fake?.close();
  await dir?.remove();
});

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are read field by field
  body: any;
}

async function send(
  method: "GET" | "PUT" | "POST",
  path: string,
  body?: unknown,
  type?: string,
): Promise<Answer> {
  const res = await request(`${server.url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : {
          headers: { "content-type": type ?? "application/json" },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text === "" ? undefined : JSON.parse(text) };
}

const putJson = (key: string, value: unknown, query = "") =>
  send("PUT", `/v1/tree${key}${query}`, { kind: "json", value });

async function valueAt(key: string): Promise<unknown> {
  const node = await server.tree.get(key);
  return node && node.kind === "json" ? node.value.value : node;
}

describe("a declaration that does not validate", () => {
  it("is refused over PUT with 400 TREE_INVALID_VALUE and each problem; the previous value stays", async () => {
    expect((await putJson("/byteseek/tools/text.wc", GOOD)).status).toBe(200);
    const r = await putJson("/byteseek/tools/text.wc", BAD);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      code: "TREE_INVALID_VALUE",
      key: "/byteseek/tools/text.wc",
      check: "declaration",
    });
    expect(r.body.error.problems).toEqual([
      "impl.argv: Too small: expected array to have >=1 items",
      expect.stringMatching(/^snipet: unknown field \(did you mean snippet\?\); the fields are name, /),
    ]);
    expect(r.body.error.message).toContain("?unchecked=1");
    expect(await valueAt("/byteseek/tools/text.wc")).toEqual(GOOD);
    expect((await server.tree.get("/byteseek/tools/text.wc"))?.version).toBe(1);
  });

  it("is refused when its name does not match its key", async () => {
    const r = await putJson("/byteseek/tools/text.other", GOOD);
    expect(r.status).toBe(400);
    expect(r.body.error.problems).toEqual(['name: "text.wc" does not match its key (…/tools/text.other)']);
  });

  it("refuses a whole transaction that would write one, running none of its operations", async () => {
    const r = await send("POST", "/v1/txn", {
      success: [
        { op: "set", key: "/notes/txn", value: "written?" },
        { op: "set", key: "/byteseek/tools/text.txn", kind: "json", value: { ...BAD, name: "text.txn" } },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "TREE_INVALID_VALUE", check: "declaration" });
    expect(r.body.error.message).toContain("the transaction did not run");
    expect(await server.tree.get("/notes/txn")).toBeUndefined();
    expect(await server.tree.get("/byteseek/tools/text.txn")).toBeUndefined();
  });

  it("refuses a txn append into the tools or MCP directory, running nothing", async () => {
    for (const dir of ["/byteseek/tools/", "/byteseek/mcp/"]) {
      const r = await send("POST", "/v1/txn", {
        success: [
          { op: "set", key: "/notes/append", value: "written?" },
          { op: "append", key: dir, kind: "json", value: GOOD },
        ],
      });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: "TREE_INVALID_VALUE", key: dir });
      expect(await server.tree.get("/notes/append")).toBeUndefined();
      expect(await server.tree.get(`${dir}0`)).toBeUndefined();
    }
  });

  it("refuses an import naming the line, importing nothing", async () => {
    const lines = [
      JSON.stringify({ key: "/notes/imported", kind: "char/utf8", value: "x" }),
      JSON.stringify({ key: "/byteseek/tools/text.imp", kind: "json", value: { ...BAD, name: "text.imp" } }),
    ].join("\n");
    const r = await send("POST", "/v1/import", lines, "application/x-ndjson");
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      code: "TREE_INVALID_VALUE",
      line: 2,
      key: "/byteseek/tools/text.imp",
    });
    expect(r.body.error.message).toMatch(/^import failed at line 2: .* nothing was imported/);
    expect(await server.tree.get("/notes/imported")).toBeUndefined();
  });

  it("is refused as an append into /byteseek/tools/ (a numbered name is never a declaration's)", async () => {
    const r = await send("POST", "/v1/tree/byteseek/tools/", { kind: "json", value: GOOD });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("write /byteseek/tools/<name> instead");
  });

  it("is stored with ?unchecked=1 (PUT, txn op, import), and the catalogue reports it", async () => {
    expect(
      (await putJson("/byteseek/tools/text.bad", { ...BAD, name: "text.bad" }, "?unchecked=1")).status,
    ).toBe(200);
    const txn = await send("POST", "/v1/txn", {
      success: [
        { op: "set", key: "/byteseek/tools/text.bad2", kind: "json", value: { name: "x" }, unchecked: true },
      ],
    });
    expect(txn.status).toBe(200);
    const line = JSON.stringify({ key: "/byteseek/tools/text.bad3", kind: "json", value: {} });
    expect((await send("POST", "/v1/import?unchecked=1", line, "application/x-ndjson")).status).toBe(200);
    const tools = await send("GET", "/v1/tools");
    const invalid = tools.body.invalid.map((t: { name: string }) => t.name);
    expect(invalid).toEqual(expect.arrayContaining(["text.bad", "text.bad2", "text.bad3"]));
  });
});

describe("a move or copy landing on checked keys", () => {
  it("is refused when what lands is not a valid declaration there, and makes what a person lands theirs", async () => {
    await server.tree.set(
      "/scratch/text.wc",
      { kind: "json", value: { ...GOOD, name: "text.mv" } },
      { vid: "run-7" },
    );
    // copied under another name, the declaration's name no longer matches its key
    const r = await send("POST", "/v1/copy", {
      from: "/byteseek/tools/text.wc",
      to: "/byteseek/tools/text.cp",
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "TREE_INVALID_VALUE", key: "/byteseek/tools/text.cp" });
    expect(await server.tree.get("/byteseek/tools/text.cp")).toBeUndefined();
    // a directory copied over the tools with an invalid declaration in it: refused, nothing changes
    await server.tree.set("/staging/text.wc", { kind: "json", value: BAD });
    const before = server.tree.revision();
    const txn = await send("POST", "/v1/txn", {
      success: [{ op: "copy", key: "/staging/", to: "/byteseek/tools/", overwrite: true }],
    });
    expect(txn.status).toBe(400);
    expect(txn.body.error.problems).toContain("impl.argv: Too small: expected array to have >=1 items");
    expect(server.tree.revision()).toBe(before);
    // a run's value a person moves into the tools becomes the person's
    const m = await send("POST", "/v1/move", { from: "/scratch/text.wc", to: "/byteseek/tools/text.mv" });
    expect(m.status).toBe(200);
    const node = await server.tree.get("/byteseek/tools/text.mv");
    expect(node?.vid).toBeUndefined();
  });
});

describe("an MCP server entry that does not validate", () => {
  it("is refused with its problem; a valid one is written", async () => {
    const r = await putJson("/byteseek/mcp/files", { command: ["npx", "x"], url: "http://127.0.0.1:9/mcp" });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ check: "mcp-server" });
    expect(r.body.error.problems).toEqual(["give either command (stdio) or url (Streamable HTTP), not both"]);
    expect(await server.tree.get("/byteseek/mcp/files")).toBeUndefined();
  });
});

describe("an agent's tree.set of a declaration that does not validate", () => {
  it("answers the model kind arg with the problems, and nothing is stored", async () => {
    fake.script(
      {
        toolCalls: [
          {
            name: "tree.set",
            args: { key: "/byteseek/tools/text.agent", value: { ...BAD, name: "text.agent" } },
          },
        ],
      },
      { text: "I could not declare it" },
    );
    const r = await send("POST", "/v1/agent/turn", { vid: "checked1", input: "declare text.agent" });
    expect(r.status).toBe(200);
    expect(r.body.calls).toMatchObject([{ name: "tree.set", kind: "arg", isError: true }]);
    const record = await valueAt("/byteseek/tool/checked1/0");
    expect((record as { text: string }).text).toContain("impl.argv: Too small");
    expect(await server.tree.get("/byteseek/tools/text.agent")).toBeUndefined();
  });
});

describe("a policy that does not validate", () => {
  it("is refused naming the unknown field, even with force; the policy in force is unchanged", async () => {
    const before = await server.tree.get("/byteseek/policy");
    const r = await send("PUT", "/v1/tree/byteseek/policy?force=1", {
      kind: "json",
      ro: true,
      value: { grants: { default: { exec: false } }, denyKey: [] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "TREE_INVALID_VALUE", check: "policy" });
    expect(r.body.error.problems).toEqual([
      "grants.default.read: missing (expected boolean)",
      "grants.default.write: missing (expected boolean)",
      "grants.default.model: missing (expected boolean)",
      "grants.default.net: missing (expected array)",
      "grants.default.tree: missing (expected array)",
      expect.stringMatching(
        /^denyKey: unknown field \(did you mean denyKeys\?\); the fields are workspaceRoots, /,
      ),
    ]);
    expect((await server.tree.get("/byteseek/policy"))?.modRev).toBe(before?.modRev);
  });

  it("is stored with ?unchecked=1, and /v1/tools names its problems", async () => {
    const r = await send("PUT", "/v1/tree/byteseek/policy?force=1&unchecked=1", {
      kind: "json",
      ro: true,
      value: { grantz: {} },
    });
    expect(r.status).toBe(200);
    const tools = await send("GET", "/v1/tools");
    expect(tools.body.policy).toEqual({
      key: "/byteseek/policy",
      problems: [expect.stringMatching(/^grantz: unknown field \(did you mean grants\?\)/)],
    });
  });
});
