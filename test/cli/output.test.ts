/**
 * Scriptable output (`-o json|ndjson`, `--quiet`): the shapes README.md's CLI section documents,
 * parsed back, on one embedded store through the same dispatcher the executable uses.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../cli/commands/index.js";
import { createApprovals } from "../../tools/gate/approvals.js";
import { openTree } from "../../tree/index.js";
import { cliEnv, tempDirs } from "./cli-server.js";
import { runInProcess } from "./in-process.js";

const temps = tempDirs("kvspace-output-");
let env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  env = cliEnv(join(await temps.make(), "store"), { BYTESEEK_SEED: "0", BYTESEEK_HISTORY: "/h/=5" });
});
afterAll(() => temps.removeAll());

const kv = (...args: string[]) => runInProcess(args, { env });
const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("kvspace -o json|ndjson", () => {
  it("prints each write as {key, rev, version}, and reads back the HTTP API's node shapes", async () => {
    const set = await kv("set", "-o", "json", "/o/a", "int:9007199254740993");
    expect(set.code).toBe(0);
    const written = JSON.parse(set.stdout) as { key: string; rev: number; version: number };
    expect(written).toEqual({ key: "/o/a", rev: expect.any(Number), version: 1 });
    const [node] = lines((await kv("get", "-o", "json", "/o/a", "/o/none")).stdout);
    // beyond 2^53 an int64 is a decimal string, exactly
    expect(node).toMatchObject({
      key: "/o/a",
      kind: "int64",
      value: "9007199254740993",
      version: 1,
      ro: false,
    });
    expect(node?.modRev).toBe(written.rev);
    expect(lines((await kv("get", "-o", "ndjson", "/o/none")).stdout)).toEqual([
      { key: "/o/none", absent: true },
    ]);
    const [head] = lines((await kv("head", "-o", "json", "/o/a")).stdout);
    expect(head).toMatchObject({ key: "/o/a", kind: "int64", version: 1 });
    expect(head).not.toHaveProperty("value");
  });

  it("lists as one document or one child a line, and draws a tree as entries", async () => {
    await kv("set", "/o/d/x", "string:deep");
    const list = JSON.parse((await kv("list", "-o", "json", "/o/")).stdout) as {
      key: string;
      children: Array<Record<string, unknown>>;
    };
    expect(list.key).toBe("/o/");
    expect(list.children.map((c) => [c.name, c.kind, c.value ?? c.count])).toEqual([
      ["a", "int64", "9007199254740993"],
      ["d/", "index", 1],
    ]);
    expect(lines((await kv("ls", "-o", "ndjson", "/o/")).stdout).map((c) => c.name)).toEqual(["a", "d/"]);
    expect(lines((await kv("tree", "-o", "ndjson", "/o/")).stdout).map((e) => e.key)).toEqual([
      "/o/a",
      "/o/d/",
      "/o/d/x",
    ]);
  });

  it("prints history as {key, history}, a delete with deleted, and a deltree with removed", async () => {
    await kv("set", "/h/v", "int:1");
    await kv("set", "/h/v", "int:2");
    const history = JSON.parse((await kv("history", "-o", "json", "/h/v")).stdout) as {
      key: string;
      history: Array<{ value: unknown; version: number }>;
    };
    expect(history.key).toBe("/h/v");
    expect(history.history.map((h) => [h.value, h.version])).toEqual([[1, 1]]);
    expect(JSON.parse((await kv("del", "-o", "json", "/h/none")).stdout)).toMatchObject({ deleted: false });
    expect(JSON.parse((await kv("deltree", "-o", "json", "/h/")).stdout)).toMatchObject({
      key: "/h/",
      removed: 2,
    });
  });

  it("--quiet leaves the notes off stderr; the data and the exit code stay", async () => {
    const noisy = await kv("list", "/nowhere/");
    expect(noisy.stderr).toContain("no directory /nowhere/");
    const quiet = await kv("list", "--quiet", "/nowhere/");
    expect({ code: quiet.code, stderr: quiet.stderr, stdout: quiet.stdout }).toEqual({
      code: 0,
      stderr: "",
      stdout: "",
    });
    // errors are still said
    const failing = await kv("get", "-q", "bad key");
    expect(failing.code).toBe(1);
    expect(failing.stderr).not.toBe("");
  });

  it("says what history has not kept, instead of printing nothing", async () => {
    await kv("set", "/nohist/v", "int:1");
    const r = await kv("history", "/nohist/v");
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("/nohist/v (version 1) has no previous versions kept; BYTESEEK_HISTORY sets");
  });
});

describe("every kvspace command that prints data", () => {
  it("takes -o json or -o ndjson and its --help names the shape; kvspace --help lists the stable exit codes", async () => {
    const without = COMMANDS.filter((c) => !c.outputs?.length).map((c) => c.name);
    expect(without).toEqual([]);
    const unsaid = COMMANDS.filter((c) => !/-o (json|ndjson)/.test(c.help ?? "")).map((c) => c.name);
    expect(unsaid).toEqual([]);
    const help = (await kv("--help")).stdout.replace(/\s+/g, " ");
    expect(help).toContain(
      "Exit codes (stable): 0 ok, 1 an error, 2 a usage error (a bad flag value names those accepted), 3 a tool call (or check) that answered anything but ok.",
    );
    expect(help).toContain("-q/--quiet");
    // a format a command does not take is a usage error naming those it does
    const refused = await kv("policy", "-o", "ndjson");
    expect({ code: refused.code, stderr: refused.stderr }).toMatchObject({ code: 2 });
    expect(refused.stderr).toContain("-o takes text, json here, got 'ndjson'");
  });
});

describe("kvspace's runtime commands -o json|ndjson (policy, approvals, approve, deny, runs, mcp, tools accept)", () => {
  let store = "";
  let workspace = "";
  let env2: NodeJS.ProcessEnv = {};
  const rt = (...args: string[]) => runInProcess(args, { env: env2 });
  beforeAll(async () => {
    store = join(await temps.make(), "store");
    workspace = await temps.make();
    env2 = cliEnv(store, { BYTESEEK_WORKSPACE: workspace });
    // seeds the store (the shipped tools and policy)
    expect((await rt("tools", "--check")).code).toBe(0);
    const tree = await openTree({ backend: "classic", location: store });
    try {
      const approvals = createApprovals(tree);
      for (const vid of ["r1", "r2"])
        await approvals.requestApproval({
          vid,
          tool: "text.wc",
          args: { path: "notes.md" },
          reason: "text.wc needs a person's approval (rule: confirm)",
          rule: "confirm",
        });
    } finally {
      await tree.close();
    }
  });

  it("policy: one object, lists as arrays, the workspace named", async () => {
    const r = await rt("policy", "-o", "json");
    expect(r.code, r.stderr).toBe(0);
    const policy = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(policy).toMatchObject({ workspace, grant: expect.any(String), sandbox: expect.any(String) });
    expect(typeof policy.read).toBe("boolean");
    expect(Array.isArray(policy.net) && Array.isArray(policy.denyKeys)).toBe(true);
    expect(typeof policy.approvalTimeoutMs).toBe("number");
    // the text lines name the same fields, in the same order
    const text = (await rt("policy")).stdout.split("\n").filter(Boolean);
    expect(text.map((l) => l.split("\t")[0])).toEqual(Object.keys(policy));
  });

  it("approvals, approve and deny: the HTTP API's {pending} and {key, entry}", async () => {
    const all = JSON.parse((await rt("approvals", "-o", "json")).stdout) as {
      pending: Array<{ key: string; entry: { state: string; tool: string } }>;
    };
    expect(all.pending.map((p) => [p.key, p.entry.state, p.entry.tool])).toEqual([
      ["/byteseek/approval/r1/0", "pending", "text.wc"],
      ["/byteseek/approval/r2/0", "pending", "text.wc"],
    ]);
    expect(lines((await rt("approvals", "-o", "ndjson")).stdout).map((p) => p.key)).toEqual([
      "/byteseek/approval/r1/0",
      "/byteseek/approval/r2/0",
    ]);
    const approved = await rt("approve", "r1/0", "--scope", "once", "-o", "json");
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      key: "/byteseek/approval/r1/0",
      entry: { state: "approved", decision: { scope: "once", by: "person (cli)" } },
    });
    const denied = JSON.parse((await rt("deny", "r2/0", "--reason", "no", "-o", "json")).stdout);
    expect(denied).toMatchObject({ entry: { state: "denied", decision: { reason: "no" } } });
    const one = await rt("approvals", "r1/0", "-o", "json");
    expect(JSON.parse(one.stdout)).toMatchObject({
      key: "/byteseek/approval/r1/0",
      entry: { state: "approved" },
    });
    const none = await rt("approvals", "r9/9", "-o", "json");
    expect({ code: none.code, doc: JSON.parse(none.stdout) }).toEqual({
      code: 1,
      doc: { key: "/byteseek/approval/r9/9", absent: true },
    });
    expect(JSON.parse((await rt("approvals", "-o", "json")).stdout)).toEqual({ pending: [] });
  });

  it("runs: {runs} (every page of GET /v1/agent/runs) or one run a line", async () => {
    await rt("set", "/vthread/ra/status", "string:done");
    await rt("set", "/vthread/rb/status", "string:failed");
    const listed = JSON.parse((await rt("runs", "-o", "json")).stdout) as {
      runs: Array<{ vid: string; status: string; tokens: unknown }>;
    };
    // newest first
    expect(listed.runs.map((r) => [r.vid, r.status])).toEqual([
      ["rb", "failed"],
      ["ra", "done"],
    ]);
    expect(listed.runs[0]?.tokens).toEqual({ input: 0, output: 0 });
    expect(lines((await rt("runs", "--status", "failed", "-o", "ndjson")).stdout).map((r) => r.vid)).toEqual([
      "rb",
    ]);
    // runs diff -o json: test/agent/run-diff.test.ts, on recorded runs; ndjson is refused
    expect((await rt("runs", "diff", "ra", "rb", "-o", "ndjson")).code).toBe(2);
  });

  it("mcp add, list, status, sync, review, accept and logout: what the HTTP API answers", async () => {
    // nothing listens on port 1: the sync fails at once, and says so
    const add = await rt("mcp", "add", "down", "--url", "http://127.0.0.1:1/mcp", "-o", "json");
    expect(add.code).toBe(1);
    expect(JSON.parse(add.stdout)).toMatchObject({
      server: "down",
      key: "/byteseek/mcp/down",
      sync: { server: "down", ok: false },
    });
    const list = JSON.parse((await rt("mcp", "list", "-o", "json")).stdout) as {
      servers: Array<{ server: string; transport: string; tools: number }>;
    };
    expect(list.servers.map((s) => [s.server, s.transport, s.tools])).toEqual([["down", "http", 0]]);
    expect(lines((await rt("mcp", "status", "down", "-o", "ndjson")).stdout)).toMatchObject([
      { server: "down", held: [] },
    ]);
    const sync = await rt("mcp", "sync", "-o", "json");
    expect(sync.code).toBe(1);
    expect(JSON.parse(sync.stdout)).toMatchObject({ reports: [{ server: "down", ok: false }] });
    expect(JSON.parse((await rt("mcp", "review", "down", "-o", "json")).stdout)).toEqual({
      server: "down",
      held: [],
      gone: [],
    });
    expect(JSON.parse((await rt("mcp", "accept", "down", "-o", "json")).stdout)).toEqual({
      server: "down",
      accepted: [],
      held: [],
    });
    expect(JSON.parse((await rt("mcp", "logout", "down", "-o", "json")).stdout)).toEqual({
      server: "down",
      signedOut: false,
    });
    const ndjson = await rt("mcp", "review", "down", "-o", "ndjson");
    expect(ndjson.code).toBe(2);
    expect(ndjson.stderr).toContain("-o ndjson is for mcp list, status and sync");
  });

  it("tools accept: the acceptance as POST /v1/tools/<name>/accept answers", async () => {
    const decl = {
      name: "my.get",
      description: "read a tree key",
      params: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
      impl: { kind: "builtin", ref: "tree.get" },
    };
    const declared = await rt(
      "call",
      "tree.set",
      JSON.stringify({ key: "/byteseek/tools/my.get", value: decl }),
      "--vid",
      "author",
    );
    expect(declared.code, declared.stdout + declared.stderr).toBe(0);
    const accepted = await rt("tools", "accept", "my.get", "-o", "json");
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({
      name: "my.get",
      owner: "author",
      hash: expect.any(String),
    });
  });
});
