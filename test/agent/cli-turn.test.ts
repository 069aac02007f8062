/**
 * `byteseek run` end to end with the fake model: the model settings a person exported reach a
 * server that runs the turn (the key only when asked, the server's key never to a URL the client
 * chose), and what a turn shows on a real terminal (`script`), piped, and with the logs kept out.
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createByteseek } from "../../compose/byteseek.js";
import { buildApp } from "../../server/app.js";
import { type Json, json, openTree } from "../../tree/index.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { silent, tempDir } from "../tools/helpers.js";
import { BYTESEEK_BIN, byteseek, needBuiltCli } from "./helpers.js";
import { watchRuns } from "./replay-check.js";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

beforeAll(() => {
  needBuiltCli();
});

async function dirs() {
  const dir = await tempDir("byteseek-cli-turn-");
  cleanup.push(() => dir.remove());
  const workspace = join(dir.path, "ws");
  await mkdir(workspace);
  return { store: join(dir.path, "db"), workspace };
}

async function fakeModel(): Promise<FakeLlm> {
  const fake = await startFakeLlm();
  cleanup.push(() => fake.close());
  return fake;
}

function llmEnv(fake: FakeLlm): Record<string, string> {
  return {
    BYTESEEK_LLM_API: "openai",
    BYTESEEK_LLM_URL: `${fake.url}/v1`,
    BYTESEEK_LLM_MODEL: "fake-1",
    BYTESEEK_LLM_MAX_RETRIES: "0",
  };
}

/** A byteseek server (classic-level, 127.0.0.1:0) whose own model settings are `env`. */
async function serve(env: NodeJS.ProcessEnv): Promise<string> {
  return (await serveWith(env)).url;
}

async function serveWith(env: NodeJS.ProcessEnv) {
  const { store, workspace } = await dirs();
  const tree = await openTree({ backend: "classic", location: store });
  cleanup.push(() => tree.close());
  const bs = await createByteseek({ tree, workspace, logger: silent, env });
  cleanup.push(() => bs.close());
  // every run the server finishes replays exactly (replay-check.ts), checked once its app closed
  const runs = watchRuns({ tree: bs.tree, runtime: bs.runtime, agent: bs.agent });
  cleanup.push(async () => {
    await runs.check();
  });
  const app = await buildApp({ tree, logger: silent, runtime: bs.runtime, agent: runs.agent, web: false });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  cleanup.push(() => app.close());
  return { url, tree, workspace };
}

/** Runs byteseek on a real terminal (`script`) and answers everything it drew; `answer` types a reply once `when` shows. */
function onTerminal(args: string, env: NodeJS.ProcessEnv, answer?: { when: string; keys: string }) {
  const child = spawn("script", ["-qfec", `${process.execPath} ${BYTESEEK_BIN} ${args}`, "/dev/null"], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  let answered = false;
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    screen += c;
    if (answer && !answered && screen.includes(answer.when)) {
      answered = true;
      child.stdin.write(answer.keys);
    }
  });
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      child.stdin.destroy();
      resolve({ code, screen });
    });
  });
}

describe("byteseek run through a server: whose model settings", () => {
  it("sends the person's BYTESEEK_LLM_* with the turn, and the key only with --send-key", async () => {
    const fake = await fakeModel();
    // a server with no model of its own, letting its clients name theirs
    const server = await serve({ BYTESEEK_LLM_CLIENT_URLS: fake.url });
    fake.script({ text: "answered by your model" }, { text: "again" });
    const env = { PATH: process.env.PATH, KVSPACE: server, ...llmEnv(fake), BYTESEEK_LLM_KEY: "sk-client-7" };

    const r = await byteseek(["run", "hello", "--vid", "remote1"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("answered by your model");
    expect(r.stderr).toContain(
      "model: BYTESEEK_LLM_API, BYTESEEK_LLM_URL, BYTESEEK_LLM_MODEL, BYTESEEK_LLM_MAX_RETRIES from this shell, sent with each turn",
    );
    expect(r.stderr).toContain("BYTESEEK_LLM_KEY stays here (--send-key sends it");
    expect(fake.requests[0]?.model).toBe("fake-1");
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();

    const keyed = await byteseek(["run", "hello", "--send-key", "--vid", "remote1"], env);
    expect(keyed.code).toBe(0);
    expect(keyed.stderr).not.toContain("stays here");
    expect(fake.requests[1]?.headers.authorization).toBe("Bearer sk-client-7");
  });

  it("never sends the server's key to the URL a client chose, only to the server's own", async () => {
    const serverModel = await fakeModel();
    const clientModel = await fakeModel();
    const server = await serve({
      ...llmEnv(serverModel),
      BYTESEEK_LLM_KEY: "sk-server-secret",
      BYTESEEK_LLM_CLIENT_URLS: clientModel.url,
    });
    clientModel.script({ text: "from the client's choice" });
    serverModel.script({ text: "from the server's model" });

    const chosen = await byteseek(["run", "hi"], {
      PATH: process.env.PATH,
      KVSPACE: server,
      ...llmEnv(clientModel),
    });
    expect(chosen.code).toBe(0);
    expect(clientModel.requests).toHaveLength(1);
    expect(JSON.stringify(clientModel.requests[0]?.headers)).not.toContain("sk-server-secret");

    const own = await byteseek(["run", "hi"], { PATH: process.env.PATH, KVSPACE: server });
    expect(own.code).toBe(0);
    expect(own.stdout).toContain("from the server's model");
    expect(own.stderr).toContain("model: the server's settings apply");
    expect(serverModel.requests[0]?.headers.authorization).toBe("Bearer sk-server-secret");
  });

  it("says what to set when the server does not let clients name a model URL", async () => {
    const serverModel = await fakeModel();
    const clientModel = await fakeModel();
    const server = await serve({ ...llmEnv(serverModel), BYTESEEK_LLM_KEY: "sk-server-secret" });
    const r = await byteseek(["run", "hi"], {
      PATH: process.env.PATH,
      KVSPACE: server,
      ...llmEnv(clientModel),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the turn ran on the server at ${server}: this server does not call model URLs`,
    );
    expect(r.stderr).toContain(`BYTESEEK_LLM_CLIENT_URLS=${clientModel.url}`);
    expect(clientModel.requests).toHaveLength(0);
    expect(serverModel.requests).toHaveLength(0);
  });

  it("says the turn ran on the server and every place it looked when no model is set anywhere", async () => {
    const server = await serve({});
    const r = await byteseek(["run", "hi"], { PATH: process.env.PATH, KVSPACE: server });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `model: the server's settings apply (its BYTESEEK_LLM_* or /byteseek/llm/* in its tree); export BYTESEEK_LLM_API, BYTESEEK_LLM_URL and BYTESEEK_LLM_MODEL here to choose, or KVSPACE=${server} kvspace set /byteseek/llm/model string:NAME`,
    );
    expect(r.stderr).toContain(`the turn ran on the server at ${server}: no model provider configured`);
    expect(r.stderr).toContain("in the settings the client sent, in the server's environment");
  });
});

describe("what byteseek run shows", () => {
  it("through a server, on a terminal: asks about a call waiting for approval inline, and r approves it for the run", async () => {
    const fake = await fakeModel();
    const server = await serveWith(llmEnv(fake));
    const node = await server.tree.get("/byteseek/tools/edit.write");
    const decl = node?.kind === "json" ? (node.value.value as Record<string, Json>) : {};
    await server.tree.set("/byteseek/tools/edit.write", json({ ...decl, confirm: true }));
    fake.script(
      { toolCalls: [{ name: "edit.write", args: { path: "remote.txt", text: "approved from afar\n" } }] },
      { text: "written" },
    );
    const env = { PATH: process.env.PATH, KVSPACE: server.url, TERM: "dumb" };
    const r = await onTerminal("run 'write remote.txt' --vid rtty", env, {
      when: "(one key, no Enter)",
      keys: "r",
    });
    expect(r.code).toBe(0);
    // one key, no Enter (the terminal is in raw mode for the answer)
    expect(r.screen).toContain(
      "approve edit.write? [y] once · [r] for this run · [a] always (as declared now) · [n] no (one key, no Enter)",
    );
    expect(await readFile(join(server.workspace, "remote.txt"), "utf8")).toBe("approved from afar\n");
    const decided = await server.tree.get("/byteseek/approval/rtty/0");
    expect(decided?.kind === "json" ? decided.value.value : undefined).toMatchObject({
      state: "approved",
      decision: { scope: "run", by: "person (http)" },
    });
  });

  it("on a terminal: a spinner naming the tool while the model writes its call, and colours", async () => {
    const { store, workspace } = await dirs();
    const fake = await fakeModel();
    fake.script(
      {
        toolCalls: [{ name: "edit.write", args: { path: "new.txt", text: "x".repeat(400) } }],
        chunkSize: 8,
      },
      { text: "written" },
    );
    const env = { PATH: process.env.PATH, KVSPACE: store, BYTESEEK_WORKSPACE: workspace, ...llmEnv(fake) };
    const r = await onTerminal("run 'write it' --vid tty2", { ...env, TERM: "xterm" });
    expect(r.code).toBe(0);
    expect(r.screen).toMatch(
      /\r\x1b\[K\x1b\[36m\S\x1b\[0m \x1b\[2medit\.write: the model is writing the call/,
    );
    expect(r.screen).toContain("\x1b[32m✓ ok\x1b[0m");
    expect(r.screen).toMatch(/\(2 steps · 1 tool call · \d+ tokens in, \d+ out\)/);

    fake.script({ text: "plain" });
    const plain = await onTerminal("run 'again' --vid tty2", { ...env, TERM: "xterm", NO_COLOR: "1" });
    expect(plain.code).toBe(0);
    expect(plain.screen).not.toMatch(/\x1b\[\d+m/);
    expect(plain.screen).toMatch(/\r\x1b\[K\S waiting for the model/);
  });

  it("byteseek chat on a terminal: the spinner gives the line back to the prompt after each turn", async () => {
    const { store, workspace } = await dirs();
    const fake = await fakeModel();
    fake.script({ text: "hello there" });
    const env = { PATH: process.env.PATH, KVSPACE: store, BYTESEEK_WORKSPACE: workspace, ...llmEnv(fake) };
    const child = spawn(
      "script",
      ["-qfec", `${process.execPath} ${BYTESEEK_BIN} chat --vid ctty`, "/dev/null"],
      {
        env: { ...env, TERM: "xterm", NO_COLOR: "1" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let screen = "";
    let step = 0;
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      screen += c;
      if (step === 0 && screen.includes("byteseek> ")) {
        step = 1;
        child.stdin.write("hi\r");
      } else if (
        step === 1 &&
        /\(1 step · 0 tool calls · \d+ tokens in, \d+ out\)\r?\n[\s\S]*byteseek> /.test(screen)
      ) {
        step = 2;
        child.stdin.write("exit\r");
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.destroy();
    expect(code).toBe(0);
    const turn = screen.slice(screen.indexOf("hi"));
    expect(turn).toMatch(/\r\x1b\[K\S waiting for the model/);
    // the spinner's line is cleared before the answer, which starts at the line's beginning
    expect(turn).toMatch(/\r\x1b\[Khello there/);
  });

  it("keeps the logs out of the conversation: a model failure is one line, the details in the log file", async () => {
    const { store, workspace } = await dirs();
    const fake = await fakeModel();
    fake.script({ status: 400, message: "fake says no" });
    const env = { PATH: process.env.PATH, KVSPACE: store, BYTESEEK_WORKSPACE: workspace, ...llmEnv(fake) };
    const r = await byteseek(["run", "fail please", "--vid", "logs1"], env);
    expect(r.code).toBe(1);
    const logFile = join(store, "byteseek.log");
    expect(r.stderr.split("\n")).toEqual([
      `vid logs1 · workspace ${await realpath(workspace)}`,
      expect.stringMatching(
        /^byteseek: the turn stopped \(model_error\): .*fake says no.* \(logs: .*byteseek\.log\)$/,
      ),
      "",
    ]);
    expect(r.stdout).not.toMatch(/"level"|\n\s+at /);
    const logged = await readFile(logFile, "utf8");
    expect(logged).toContain('"msg":"turn failed"');
  });
});
