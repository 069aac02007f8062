/**
 * `byteseek chat` on a real terminal (`script`), end to end: the model calls a tool of an upstream
 * MCP server (test/fixtures/mcp-asking-server.mjs, on stdio) that asks the person a question in the
 * middle of the call; the question and its form show in the chat, the person answers there —
 * accept with the form filled in line by line, decline, cancel — the upstream receives exactly that
 * (its tool's result repeats what it got) and the result goes back to the model. A question answered
 * from another shell meanwhile closes in the chat.
 */
import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createByteseek } from "../../compose/byteseek.js";
import { type Json, json, openTree } from "../../tree/index.js";
import { cliEnv } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { TEST_INSTALL } from "../mcp-client/helpers.js";
import { silent, tempDir } from "../tools/helpers.js";
import { BYTESEEK_BIN, needBuiltCli } from "./helpers.js";

const ASKING = resolve(import.meta.dirname, "..", "fixtures", "mcp-asking-server.mjs");

let dir: Awaited<ReturnType<typeof tempDir>>;
let fake: FakeLlm;
let store = "";
let workspace = "";

beforeAll(async () => {
  needBuiltCli();
  dir = await tempDir("byteseek-chat-elicit-");
  store = join(dir.path, "db");
  workspace = join(dir.path, "ws");
  await mkdir(workspace);
  fake = await startFakeLlm();
  // a person registered the upstream before the chat: its tools are in the tree
  const tree = await openTree({ backend: "classic", location: store });
  const bs = await createByteseek({ tree, workspace, logger: silent, env: {} });
  try {
    await tree.set(
      "/byteseek/mcp/askio",
      json({ command: [process.execPath, ASKING], readOnlyPaths: TEST_INSTALL } as never),
    );
    const [report] = await bs.mcp.sync("askio");
    expect(report?.ok, report?.error).toBe(true);
  } finally {
    await bs.close();
    await tree.close();
  }
});

afterAll(async () => {
  await fake?.close();
  await dir?.remove();
});

/**
 * What the person types once the screen shows `when` (after what the previous step waited for), or
 * what is done elsewhere then (the next steps wait for it).
 */
interface Step {
  when: string;
  keys: string | (() => Promise<unknown>);
}

/** Runs `byteseek chat` on a terminal and plays `steps` in order; answers the whole screen. */
function chatOnTerminal(vid: string, steps: Step[]): Promise<{ code: number | null; screen: string }> {
  const env = {
    PATH: process.env.PATH,
    KVSPACE: store,
    BYTESEEK_WORKSPACE: workspace,
    BYTESEEK_LLM_API: "openai",
    BYTESEEK_LLM_URL: `${fake.url}/v1`,
    BYTESEEK_LLM_MODEL: "fake-1",
    BYTESEEK_LLM_MAX_RETRIES: "0",
    TERM: "dumb",
    NO_COLOR: "1",
  };
  const child = spawn(
    "script",
    ["-qfec", `${process.execPath} ${BYTESEEK_BIN} chat --vid ${vid}`, "/dev/null"],
    {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let screen = "";
  let from = 0;
  let next = 0;
  let acting = false;
  const play = () => {
    while (!acting) {
      const step = steps[next];
      const at = step ? screen.indexOf(step.when, from) : -1;
      if (!step || at < 0) break;
      from = at + step.when.length;
      next++;
      if (typeof step.keys === "string") child.stdin.write(step.keys);
      else {
        acting = true;
        void step.keys().finally(() => {
          acting = false;
          play();
        });
      }
    }
  };
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    screen += c;
    play();
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      child.stdin.destroy();
      if (next < steps.length) screen += `\n[test: still waiting for ${JSON.stringify(steps[next]?.when)}]`;
      resolve({ code, screen });
    });
  });
}

/** `kvspace` from another shell, on the folder the chat holds (through its socket). */
async function elsewhere(args: string[]): Promise<void> {
  const r = await runInProcess(args, { env: cliEnv(store) });
  expect(r.code, r.stderr).toBe(0);
}

/** The text of the tool result the model was sent last in request `n`. */
function toolResultSent(n: number): string | undefined {
  const req = fake.requests[n];
  const last = req?.messages.at(-1);
  return last?.role === "tool" ? last.text : undefined;
}

async function decisionOf(key: string): Promise<Json | undefined> {
  const tree = await openTree({ backend: "classic", location: store });
  try {
    const node = await tree.get(key);
    return node?.kind === "json" ? (node.value.value as { decision?: Json }).decision : undefined;
  } finally {
    await tree.close();
  }
}

describe("an upstream MCP server's question answered in byteseek chat", () => {
  it("shows the question and its form; accept asks each field (again when it does not fit), decline and cancel are one key; the upstream gets exactly that and the model its result; answered from another shell meanwhile, the form closes", async () => {
    const ask = (why: string) => ({ toolCalls: [{ name: "askio.ask", args: { why } }] });
    fake.script(
      ask("Who reviews this?"),
      { text: "Thanks, Ada." },
      ask("Who else?"),
      { text: "Declined, then." },
      ask("Anyone?"),
      { text: "Dismissed." },
      ask("Still there?"),
      { text: "Answered elsewhere." },
    );
    const question =
      'answer the MCP server "askio"? [y] accept (then fill in its form) · [n] decline · [c] cancel';
    const name = "name (string, required) Your name: ";
    const age = "age (integer): ";
    const r = await chatOnTerminal("celicit", [
      { when: "byteseek> ", keys: "who reviews?\r" },
      { when: question, keys: "y" },
      // an empty required field and an age that is no integer: both said, both asked again
      { when: name, keys: "\r" },
      { when: age, keys: "old\r" },
      { when: name, keys: "Ada\r" },
      { when: age, keys: "36\r" },
      { when: "byteseek> ", keys: "anyone else?\r" },
      { when: question, keys: "n" },
      { when: "byteseek> ", keys: "really nobody?\r" },
      { when: question, keys: "c" },
      // answered from another shell while the person fills the form in: the form closes
      { when: "byteseek> ", keys: "last one?\r" },
      { when: question, keys: "y" },
      { when: name, keys: () => elsewhere(["deny", "celicit/3", "--cancel"]) },
      { when: "(decided elsewhere)", keys: "" },
      { when: "byteseek> ", keys: "exit\r" },
    ]);
    expect(r.code, r.screen).toBe(0);
    const screen = r.screen.replace(/\r/g, "");
    expect(screen).toContain("asks: Who reviews this?\n");
    expect(screen).toContain("form: name (string, required), age (integer)\n");
    expect(screen).toContain("  name: expected a value (this argument is required)\n");
    expect(screen).toContain('  age: expected must be integer, got string "old"\n');
    expect(screen).toContain("Thanks, Ada.");

    // each answer reached the upstream as it was given, and its result went back to the model
    expect(fake.requests).toHaveLength(8);
    expect(toolResultSent(1)).toBe('action=accept content={"name":"Ada","age":36}');
    expect(toolResultSent(3)).toBe("action=decline content=null");
    expect(toolResultSent(5)).toBe("action=cancel content=null");
    expect(toolResultSent(7)).toBe("action=cancel content=null");
    // the form closed on the answer from elsewhere: "exit" reached the chat, not a field
    expect(screen).toContain("Answered elsewhere.");

    // each question was an approval entry, decided by the person at the terminal
    expect(await decisionOf("/byteseek/approval/celicit/0")).toMatchObject({
      action: "accept",
      content: { name: "Ada", age: 36 },
      by: "person (terminal)",
    });
    expect(await decisionOf("/byteseek/approval/celicit/1")).toMatchObject({ action: "decline" });
    expect(await decisionOf("/byteseek/approval/celicit/2")).toMatchObject({ action: "cancel" });
    expect(await decisionOf("/byteseek/approval/celicit/3")).toMatchObject({
      action: "cancel",
      via: "command line (kvspace approve/deny)",
    });
  });
});
