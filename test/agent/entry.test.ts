import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { type App, buildApp } from "../../server/app.js";
import { readSse } from "../../shared/sse.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { formatValue, type Json, json, str } from "../../tree/value.js";
import { runCli } from "../cli/run-cli.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { silent, tempDir } from "../tools/helpers.js";
import { BYTESEEK_BIN, byteseek, needBuiltCli } from "./helpers.js";
import { watchRuns } from "./replay-check.js";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

async function dirs() {
  const dir = await tempDir("byteseek-entry-");
  cleanup.push(() => dir.remove());
  const workspace = join(dir.path, "ws");
  await mkdir(workspace);
  return { store: join(dir.path, "db"), workspace };
}

function llmEnv(fake: FakeLlm, retries = "1"): NodeJS.ProcessEnv {
  return {
    BYTESEEK_LLM_API: "openai",
    BYTESEEK_LLM_URL: `${fake.url}/v1`,
    BYTESEEK_LLM_MODEL: "fake-1",
    BYTESEEK_LLM_MAX_RETRIES: retries,
  };
}

interface Served {
  fake: FakeLlm;
  tree: Tree;
  bs: Byteseek;
  app: App;
  url: string;
  workspace: string;
  status(vid: string): Promise<string | undefined>;
}

/** A real server (classic-level, 127.0.0.1:0) with the runtime and the agent wired as startServer does. */
async function serve(env?: NodeJS.ProcessEnv): Promise<Served> {
  const { store, workspace } = await dirs();
  const fake = await startFakeLlm();
  cleanup.push(() => fake.close());
  const tree = await openTree({ backend: "classic", location: store });
  cleanup.push(() => tree.close());
  const bs = await createByteseek({
    tree,
    workspace,
    logger: silent,
    env: env ?? llmEnv(fake),
    providerDeps: { retry: { baseDelayMs: 5, maxDelayMs: 20 } },
  });
  cleanup.push(() => bs.close());
  // every run the server finishes replays exactly (replay-check.ts), checked once its app closed
  const runs = watchRuns({ tree: bs.tree, runtime: bs.runtime, agent: bs.agent, fake });
  cleanup.push(async () => {
    await runs.check();
  });
  const app = await buildApp({ tree, logger: silent, runtime: bs.runtime, agent: runs.agent, web: false });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  cleanup.push(() => app.close());
  const status = async (vid: string) => {
    const node = await tree.get(`/vthread/${vid}/status`);
    return node && node.kind !== "index" ? formatValue(node.value) : undefined;
  };
  return { fake, tree, bs, app, url, workspace, status };
}

interface TurnBody {
  error: { code: string; message: string; vid?: string };
  usage: { inputTokens: number };
  [field: string]: unknown;
}

async function postTurn(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${url}/v1/agent/turn`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: (await res.body.json()) as TurnBody,
  };
}

describe("POST /v1/agent/turn", () => {
  it("answers the final text, the stop reason, the records and the usage", async () => {
    const s = await serve();
    await writeFile(join(s.workspace, "r.txt"), "hello\n");
    s.fake.script({ toolCalls: [{ name: "edit.read", args: { path: "r.txt" } }] }, { text: "it says hello" });
    const res = await postTurn(s.url, { vid: "h1", input: "what is in r.txt?" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      vid: "h1",
      text: "it says hello",
      reason: "done",
      records: ["/byteseek/tool/h1/0"],
      calls: [{ name: "edit.read", kind: "ok", isError: false, record: "/byteseek/tool/h1/0" }],
    });
    expect(res.body.usage.inputTokens).toBeGreaterThan(0);
    expect(await s.status("h1")).toBe("done");

    const fresh = await postTurn(s.url, { input: "hi" });
    expect(fresh.status).toBe(502); // the script is empty: the fake answers 500
    expect(fresh.body.error).toMatchObject({ code: "LLM_HTTP" });
    expect(fresh.body.error.vid).toMatch(/^r/);
  });

  it("streams the AgentEvents as server-sent events with Accept: text/event-stream", async () => {
    const s = await serve();
    s.fake.script(
      { toolCalls: [{ name: "edit.read", args: { path: "none.txt" } }] },
      { text: "no such file" },
    );
    const res = await request(`${s.url}/v1/agent/turn`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ vid: "sse", input: "read none.txt" }),
    });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers["content-type"])).toMatch(/^text\/event-stream/);
    const events: Array<{ event: string; data: { delta?: string; result?: unknown } }> = [];
    for await (const e of readSse(res.body)) events.push({ event: e.event, data: JSON.parse(e.data) });
    const names = events.map((e) => e.event).filter((n, i, all) => n !== all[i - 1]);
    expect(names).toEqual([
      "turn_start",
      "step",
      "toolcall_start",
      "toolcall_delta",
      "tool_start",
      "tool_result",
      "step",
      "text_delta",
      "turn_end",
    ]);
    expect(events.find((e) => e.event === "tool_result")?.data).toMatchObject({
      name: "edit.read",
      kind: "runtime",
      isError: true,
      record: "/byteseek/tool/sse/0",
    });
    const text = events
      .filter((e) => e.event === "text_delta")
      .map((e) => e.data.delta)
      .join("");
    expect(text).toBe("no such file");
    expect(events.at(-1)?.data.result).toMatchObject({ vid: "sse", reason: "done", text: "no such file" });
  });

  it("aborts the turn when the client goes away", async () => {
    const s = await serve();
    s.fake.script({ hold: "headers" });
    const ac = new AbortController();
    const res = await request(`${s.url}/v1/agent/turn`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ vid: "gone", input: "take your time" }),
      signal: ac.signal,
    });
    // Wait for the turn to reach the model, then leave.
    const reader = readSse(res.body);
    for await (const e of reader) if (e.event === "step") break;
    ac.abort();
    while ((await s.status("gone")) !== "failed") await new Promise((r) => setTimeout(r, 20));
    const reason = await s.tree.get("/vthread/gone/reason");
    expect(reason && reason.kind !== "index" ? formatValue(reason.value) : "").toMatch(/^aborted/);
  });

  it("says which variable to set when no model is configured (503)", async () => {
    const s = await serve({});
    const res = await postTurn(s.url, { input: "hi" });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("LLM_NOT_CONFIGURED");
    expect(res.body.error.message).toContain("BYTESEEK_LLM_URL");
  });

  it("runs on the model settings a client sends, and refuses a setting it does not know", async () => {
    const own = await startFakeLlm();
    cleanup.push(() => own.close());
    const s = await serve({ BYTESEEK_LLM_CLIENT_URLS: own.url });
    own.script({ text: "from the client's model" });
    const llm = { api: "openai", url: `${own.url}/v1`, model: "mine", key: "sk-sent", maxRetries: "0" };
    const res = await postTurn(s.url, { vid: "cl1", input: "hi", llm });
    expect(res.status).toBe(200);
    expect(res.body.text).toBe("from the client's model");
    expect(own.requests[0]?.model).toBe("mine");
    expect(own.requests[0]?.headers.authorization).toBe("Bearer sk-sent");
    // nothing of the settings is kept in the run's messages
    const session = await s.tree.list("/byteseek/session/cl1/");
    expect(JSON.stringify(session)).not.toContain("sk-sent");

    const unknown = await postTurn(s.url, { input: "hi", llm: { ...llm, temperature: "2" } });
    expect(unknown.status).toBe(400);
  });

  it("never sends the server's key to a model URL written in the tree", async () => {
    const attacker = await startFakeLlm();
    cleanup.push(() => attacker.close());
    // The key in the environment, the URL left to the tree: whoever writes the tree names the URL.
    const { BYTESEEK_LLM_URL: _, ...noUrl } = llmEnv(attacker);
    const s = await serve({ ...noUrl, BYTESEEK_LLM_KEY: "sk-server-secret" });
    await s.tree.set("/byteseek/llm/url", str(`${attacker.url}/v1`));
    const res = await postTurn(s.url, { vid: "t1", input: "hi" });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("LLM_BAD_CONFIG");
    expect(res.body.error.message).toContain("set BYTESEEK_LLM_URL on the server");
    expect(JSON.stringify(res.body)).not.toContain("sk-server-secret");
    expect(attacker.requests).toHaveLength(0);

    // With the URL in the environment too, the environment's URL wins and gets its key.
    const legitModel = await startFakeLlm();
    cleanup.push(() => legitModel.close());
    legitModel.script({ text: "from the server's model" });
    const own = await serve({ ...llmEnv(legitModel), BYTESEEK_LLM_KEY: "sk-legit" });
    await own.tree.set("/byteseek/llm/url", str(`${attacker.url}/v1`));
    const ok = await postTurn(own.url, { vid: "t2", input: "hi" });
    expect(ok.status).toBe(200);
    expect(ok.body.text).toBe("from the server's model");
    expect(legitModel.requests[0]?.headers.authorization).toBe("Bearer sk-legit");
    expect(attacker.requests).toHaveLength(0);
  });

  it("refuses a model URL a client names unless the server lists its origin, and never sends it the server's key", async () => {
    const attacker = await startFakeLlm();
    cleanup.push(() => attacker.close());
    const s = await serve();
    const refused = await postTurn(s.url, { vid: "c1", input: "hi", llm: { url: `${attacker.url}/v1` } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("LLM_CLIENT_REFUSED");
    expect(refused.body.error.message).toContain(`BYTESEEK_LLM_CLIENT_URLS=${attacker.url}`);
    expect(attacker.requests).toHaveLength(0);
    expect(s.fake.requests).toHaveLength(0);

    // Allowed by the server: the client's model answers, without the server's key.
    const allowing = await serve({
      ...llmEnv(attacker),
      BYTESEEK_LLM_URL: "http://127.0.0.1:9/v1",
      BYTESEEK_LLM_KEY: "sk-server-secret",
      BYTESEEK_LLM_CLIENT_URLS: `http://example.invalid, ${attacker.url}`,
    });
    attacker.script({ text: "from the client's model" });
    const allowed = await postTurn(allowing.url, {
      vid: "c2",
      input: "hi",
      llm: { url: `${attacker.url}/v1` },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.body.text).toBe("from the client's model");
    expect(attacker.requests).toHaveLength(1);
    expect(JSON.stringify(attacker.requests[0]?.headers)).not.toContain("sk-server-secret");
  });

  it("refuses a bad vid and a missing input with 400", async () => {
    const s = await serve();
    expect((await postTurn(s.url, { vid: "../x", input: "hi" })).body.error.code).toBe("AGENT_INVALID_VID");
    expect((await postTurn(s.url, { vid: "ok" })).status).toBe(400);
  });
});

describe("GET /v1/prompt", () => {
  it("shows exactly the system text and tool schemas the model gets next", async () => {
    const s = await serve();
    s.fake.script(
      { toolCalls: [{ name: "edit.read", args: { path: "missing" } }] },
      { text: "no" },
      { text: "ok" },
    );
    await postTurn(s.url, { vid: "pv", input: "read missing" });
    const res = await request(`${s.url}/v1/prompt?vid=pv`);
    expect(res.statusCode).toBe(200);
    const shown = (await res.body.json()) as { vid: string; system: string; tools: Array<{ name: string }> };
    expect(shown.vid).toBe("pv");
    expect(shown.system).toContain("[previous tool results]");
    await postTurn(s.url, { vid: "pv", input: "again" });
    const sent = s.fake.requests[2];
    expect(sent?.system).toBe(shown.system);
    expect(sent?.tools.map((t) => t.name)).toEqual(shown.tools.map((t) => t.name.replace(".", "_")));
    const bad = await request(`${s.url}/v1/prompt?vid=${encodeURIComponent("a/b")}`);
    expect(bad.statusCode).toBe(400);
    await bad.body.dump();
  });
});

describe("the byteseek CLI", () => {
  beforeAll(() => {
    needBuiltCli();
  });

  async function setup() {
    const { store, workspace } = await dirs();
    const fake = await startFakeLlm();
    cleanup.push(() => fake.close());
    const env = { PATH: process.env.PATH, KVSPACE: store, BYTESEEK_WORKSPACE: workspace, ...llmEnv(fake) };
    return { fake, env, store, workspace };
  }

  it("byteseek run streams the answer and shows each tool call with its kind", async () => {
    const { fake, env, store, workspace } = await setup();
    await writeFile(join(workspace, "r.txt"), "hello\n");
    fake.script(
      { text: "Reading.", toolCalls: [{ name: "edit.read", args: { path: "r.txt" } }] },
      { toolCalls: [{ name: "edit.read", args: { path: "gone.txt" } }] },
      { text: "It says hello." },
    );
    const r = await byteseek(["run", "what is in r.txt?", "--vid", "cli1"], env, "");
    // the first line names the run and the folder its file tools work in
    expect(r.stderr).toBe(`vid cli1 · workspace ${await realpath(workspace)}\n`);
    expect(r.stdout.split("\n")).toEqual([
      "Reading.",
      '→ edit.read {"path":"r.txt"}',
      expect.stringMatching(/^ {2}✓ ok in \d+ ms · \/byteseek\/tool\/cli1\/0$/),
      expect.stringMatching(/^ {2}│ .*hello/),
      '→ edit.read {"path":"gone.txt"}',
      expect.stringMatching(/^ {2}✗ runtime in \d+ ms · \/byteseek\/tool\/cli1\/1$/),
      // the workspace named; edit.ls and edit.glob are off as shipped, so not suggested
      `  │ gone.txt does not exist in the workspace ${await realpath(workspace)} (paths are relative to it).`,
      "It says hello.",
      expect.stringMatching(/^\(3 steps · 2 tool calls, 1 failed · \d+ tokens in, \d+ out\)$/),
      "",
    ]);
    // piped: no colours, no spinner
    expect(r.stdout).not.toMatch(/\x1b|\r/);
    expect(r.code).toBe(0);
    const tree = await openTree({ backend: "classic", location: store });
    try {
      const status = await tree.get("/vthread/cli1/status");
      expect(status && status.kind !== "index" ? formatValue(status.value) : "").toBe("done");
    } finally {
      await tree.close();
    }
  });

  it("byteseek run on its own folder, piped: the kvspace approve line it prints decides the call (it serves the store's socket)", async () => {
    const { fake, env, store, workspace } = await setup();
    const seeded = await openTree({ backend: "classic", location: store });
    try {
      const bs = await createByteseek({ tree: seeded, workspace, logger: silent, env: {} });
      await bs.close();
      const node = await seeded.get("/byteseek/tools/edit.write");
      const decl = node?.kind === "json" ? (node.value.value as Record<string, Json>) : {};
      await seeded.set("/byteseek/tools/edit.write", json({ ...decl, confirm: true }));
    } finally {
      await seeded.close();
    }
    fake.script(
      { toolCalls: [{ name: "edit.write", args: { path: "ok.txt", text: "approved\n" } }] },
      { text: "written" },
    );
    const child = spawn(process.execPath, [BYTESEEK_BIN, "run", "write ok.txt", "--vid", "pipe1"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    const line = new Promise<string>((resolve) => {
      child.stdout.setEncoding("utf8").on("data", (c: string) => {
        stdout += c;
        const m = /decide with: (kvspace approve \S+)/.exec(stdout);
        if (m) resolve(m[1] as string);
      });
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const printed = await line;
    expect(printed).toBe("kvspace approve pipe1/0");
    // the printed line, as a person would run it from another shell on the same store
    const approved = await runCli(printed.split(" ").slice(1), { env });
    expect(approved).toMatchObject({ code: 0, stdout: "/byteseek/approval/pipe1/0\tapproved\tedit.write\n" });
    expect(await closed).toBe(0);
    expect(existsSync(join(workspace, "ok.txt"))).toBe(true);
    expect(stdout).toContain("written");
  });

  it("byteseek run on a terminal asks about a call waiting for approval inline, and y runs it once", async () => {
    const { fake, env, store, workspace } = await setup();
    // A person makes shell.run ask first (seeded by a first open, then changed as a person would).
    const seeded = await openTree({ backend: "classic", location: store });
    try {
      const bs = await createByteseek({ tree: seeded, workspace, logger: silent, env: {} });
      await bs.close();
      const node = await seeded.get("/byteseek/tools/shell.run");
      const decl = node?.kind === "json" ? (node.value.value as Record<string, Json>) : {};
      await seeded.set("/byteseek/tools/shell.run", json({ ...decl, confirm: true }));
    } finally {
      await seeded.close();
    }
    fake.script(
      { toolCalls: [{ name: "shell.run", args: { command: "touch asked.txt" } }] },
      { text: "done" },
    );
    // `script` gives the CLI a real terminal; what the test writes reaches it as typed keys.
    const child = spawn(
      "script",
      ["-qfec", `${process.execPath} ${BYTESEEK_BIN} run "make the file" --vid tty1`, "/dev/null"],
      { env: { ...env, TERM: "dumb" }, stdio: ["pipe", "pipe", "pipe"] },
    );
    let screen = "";
    const asked = new Promise<void>((resolve) => {
      child.stdout.setEncoding("utf8").on("data", (c: string) => {
        screen += c;
        if (screen.includes("(one key, no Enter)")) resolve();
      });
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    await asked;
    expect(existsSync(join(workspace, "asked.txt"))).toBe(false);
    // one key and no Enter: a terminal left in line mode would never deliver it
    child.stdin.write("y");
    expect(await closed).toBe(0);
    child.stdin.destroy();
    expect(existsSync(join(workspace, "asked.txt"))).toBe(true);
    expect(screen).toContain(
      "approve shell.run? [y] once · [r] for this run · [a] always (as declared now) · [n] no (one key, no Enter)",
    );
    expect(screen).toContain("done");
  });

  it("byteseek chat answers its / commands itself, joins a line ending with \\ to the next, and sends an @path file read through edit.read", async () => {
    const { fake, env, workspace, store } = await setup();
    await writeFile(join(workspace, "notes.txt"), "the word is plum\n");
    fake.script({ text: "one" }, { text: "two" });
    const input = [
      "/help",
      "/tools",
      "/model other-model",
      "first line \\",
      "second line",
      "@notes.txt which word?",
      "@gone.txt and this?",
      "/cost",
      "/runs",
      "/clear",
      "/bogus",
      "exit",
      "",
    ].join("\n");
    const r = await byteseek(["chat", "--vid", "c2"], env, input);
    expect(r.code).toBe(0);
    // only the two messages reached the model: the commands and the failed mention did not
    expect(fake.requests).toHaveLength(2);
    const userText = (i: number) =>
      fake.requests[i]?.messages
        .filter((m) => m.role === "user")
        .map((m) => (m as { text: string }).text)
        .at(-1);
    expect(userText(0)).toBe("first line \nsecond line");
    expect(fake.requests[0]?.model).toBe("other-model");
    expect(userText(1)).toContain("@notes.txt which word?");
    expect(userText(1)).toContain("the word is plum");
    // the mention's read is a call of the run, recorded as the model's own would be
    const tree = await openTree({ backend: "classic", location: store });
    try {
      const record = await tree.get("/byteseek/tool/c2/0");
      expect(record?.kind === "json" ? record.value.value : undefined).toMatchObject({
        name: "edit.read",
        args: { path: "notes.txt" },
        kind: "ok",
      });
    } finally {
      await tree.close();
    }
    expect(r.stdout).toContain("/clear         start a new run");
    expect(r.stdout).toMatch(/edit\.read\tread a file/);
    expect(r.stdout).toMatch(/\(\d+ tools offered to run c2\)/);
    expect(r.stdout).toContain("model: other-model (openai at ");
    expect(r.stdout).toContain("...> ");
    expect(r.stdout).toMatch(
      /this chat: 2 turns · 2 steps · 0 tool calls · \d+ tokens in, \d+ out \(run c2\)/,
    );
    expect(r.stdout).toMatch(/\* c2\tdone$/m);
    expect(r.stdout).toMatch(/new run \S+: the model starts afresh \(run c2 stays in the tree\)/);
    expect(r.stdout).toContain("/bogus is not a chat command");
    expect(r.stderr).toContain("byteseek: @gone.txt: gone.txt does not exist in the workspace");
  });

  it("byteseek chat answers each line at a byteseek> prompt until exit", async () => {
    const { fake, env, workspace } = await setup();
    fake.script({ text: "hello there" }, (req) => ({ text: `you said ${req.messages.length} things` }));
    const r = await byteseek(["chat", "--vid", "c1"], env, "hi\n\nagain\nexit\nnever sent\n");
    expect(r.code).toBe(0);
    expect(r.stdout.replace(/\d+ tokens in, \d+ out/g, "N tokens in, N out")).toBe(
      [
        `byteseek chat (vid c1 · workspace ${await realpath(workspace)}); "exit" leaves, /help for more`,
        "byteseek> hello there",
        "(1 step · 0 tool calls · N tokens in, N out)",
        "byteseek> byteseek> you said 3 things",
        "(1 step · 0 tool calls · N tokens in, N out)",
        "byteseek> ",
        "",
      ].join("\n"),
    );
    expect(fake.requests).toHaveLength(2);
  });
});
