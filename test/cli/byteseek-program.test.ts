/**
 * `byteseek`'s command line: help for every command, --version, suggestions, refusals and exit
 * codes, pinned in-process with recording commands (what each command does is tested elsewhere:
 * test/agent/entry.test.ts runs the real executable).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ByteseekCommands, ByteseekUsageError, runByteseekCli } from "../../cli/byteseek-program.js";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

async function byteseek(argv: string[], commands: Partial<ByteseekCommands> = {}) {
  let stdout = "";
  let stderr = "";
  const calls: unknown[][] = [];
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return 0;
    };
  const code = await runByteseekCli(
    argv,
    { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } },
    {
      serve: record("serve") as ByteseekCommands["serve"],
      run: record("run") as ByteseekCommands["run"],
      replay: record("replay") as ByteseekCommands["replay"],
      chat: record("chat") as ByteseekCommands["chat"],
      mcp: record("mcp") as ByteseekCommands["mcp"],
      ...commands,
    },
  );
  return { stdout, stderr, code, calls };
}

describe("byteseek's command line", () => {
  it("lists its commands on --help (exit 0) and on no command (stderr, exit 2)", async () => {
    const help = await byteseek(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(
      'Usage: byteseek <command> [options]\n\nthe byteseek server, and agent turns in the terminal\n\nOptions:\n  -V, --version  print the version\n  -h, --help     print help\n\nCommands:\n  serve          run the HTTP server (KVSPACE, BYTESEEK_HOST, BYTESEEK_PORT,\n                 BYTESEEK_TOKEN; see the README)\n  run            run one agent turn, streaming the answer and each tool call\n  chat           an interactive loop with a "byteseek> " prompt; "exit" leaves\n  mcp            an MCP server on stdio, on the store at KVSPACE\n  help           print help for a command\n\nThe store is KVSPACE: a folder (default ./data), etcd://host:2379[/prefix], or for run, chat and mcp\na byteseek server\'s http:// URL. The model: BYTESEEK_LLM_API (openai|anthropic), BYTESEEK_LLM_URL,\nBYTESEEK_LLM_MODEL, BYTESEEK_LLM_KEY; through a server, these go with each turn (the key only with\n--send-key). Logs of run/chat: BYTESEEK_LOG_FILE (default byteseek.log in the store\'s folder),\nBYTESEEK_LOG_LEVEL (default warn). Exit status: 0 when the turn(s) ended normally, 1 otherwise,\n2 on a usage error.\n',
    );

    const none = await byteseek([]);
    expect(none).toMatchObject({ stdout: "", stderr: help.stdout, code: 2, calls: [] });
  });

  it("prints help for every command, and runs none of them", async () => {
    for (const name of ["serve", "run", "chat", "mcp"]) {
      for (const argv of [
        [name, "--help"],
        ["help", name],
      ]) {
        const r = await byteseek(argv);
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(new RegExp(`^Usage: byteseek ${name} `));
        expect(r.calls).toEqual([]);
      }
    }
    expect((await byteseek(["run", "--help"])).stdout).toBe(
      'Usage: byteseek run [options] [task...]\n\nrun one agent turn, streaming the answer and each tool call\n\nArguments:\n  task            what to do (the words are joined; quote it to keep the shell\n                  away)\n\nOptions:\n  --vid <vid>     the run id: its calls are recorded under /byteseek/tool/<vid>/\n                  (default: a new one)\n  --send-key      through a server: send BYTESEEK_LLM_KEY with each turn too\n  --replay <vid>  re-drive the finished run <vid> from its records: no model\n                  request, no tool runs\n  --live-tools    with --replay: run each call again in this workspace (the\n                  usual gate) and stop at the first result that differs\n  -h, --help      print help\n\nExample: byteseek run "list the TODO comments in src/" --vid todo1\nReplay: byteseek run --replay todo1 prints the run\'s turns again and where anything differs now\n(exit 0: as recorded; 1: it diverged, the step and what differed on stderr).\n',
    );
  });

  it("prints its version", async () => {
    expect(await byteseek(["--version"])).toMatchObject({ stdout: `${VERSION}\n`, code: 0 });
  });

  it("suggests the nearest command or option for a typo (exit 2)", async () => {
    expect(await byteseek(["serv"])).toMatchObject({
      stderr: "byteseek: unknown command 'serv'\n(Did you mean serve?)\n",
      code: 2,
      calls: [],
    });
    expect(await byteseek(["run", "--vdi", "x", "task"])).toMatchObject({
      stderr: "byteseek run: unknown option '--vdi'\n(Did you mean --vid?)\n(byteseek run --help for more)\n",
      code: 2,
      calls: [],
    });
  });

  it("hands each command its parsed arguments", async () => {
    expect((await byteseek(["run", "fix", "the", "bug", "--vid", "r1"])).calls).toEqual([
      ["run", "fix the bug", { vid: "r1" }],
    ]);
    expect((await byteseek(["run", "--vid=r2", "--", "--not-a-flag"])).calls).toEqual([
      ["run", "--not-a-flag", { vid: "r2" }],
    ]);
    expect((await byteseek(["run", "--replay", "r1"])).calls).toEqual([["replay", "r1", {}]]);
    expect((await byteseek(["run", "--replay", "r1", "--live-tools"])).calls).toEqual([
      ["replay", "r1", { liveTools: true }],
    ]);
    expect((await byteseek(["chat"])).calls).toEqual([["chat", {}]]);
    expect((await byteseek(["mcp", "--vid", "m1"])).calls).toEqual([["mcp", { vid: "m1" }]]);
    expect((await byteseek(["serve"])).calls).toEqual([["serve", {}]]);
    expect((await byteseek(["serve", "--no-auth"])).calls).toEqual([["serve", { noAuth: true }]]);
  });

  it("refuses what a command does not take, naming it (exit 2)", async () => {
    expect(await byteseek(["serve", "now"])).toMatchObject({
      stderr:
        "byteseek: byteseek serve takes no arguments besides --no-auth (configure it by environment); unexpected argument 'now'\n",
      code: 2,
      calls: [],
    });
    expect(await byteseek(["chat", "hello"])).toMatchObject({
      stderr:
        "byteseek: byteseek chat takes no arguments besides --vid and --send-key; unexpected argument 'hello'\n",
      code: 2,
    });
    expect(await byteseek(["run"])).toMatchObject({
      stderr: 'byteseek: byteseek run needs a task: byteseek run "what to do"\n',
      code: 2,
    });
    expect(await byteseek(["run", "--replay", "r1", "again"])).toMatchObject({
      stderr: "byteseek: byteseek run --replay <vid> takes no task and no --vid: it replays the run's own\n",
      code: 2,
      calls: [],
    });
    expect(await byteseek(["run", "--live-tools", "task"])).toMatchObject({
      stderr: "byteseek: --live-tools goes with --replay <vid>\n",
      code: 2,
      calls: [],
    });
    expect(await byteseek(["run", " "])).toMatchObject({
      stderr: 'byteseek: byteseek run needs a task: byteseek run "what to do"\n',
      code: 2,
    });
  });

  it("keeps the commands' own exit status, and makes any other failure exit 1", async () => {
    expect((await byteseek(["run", "x"], { run: async () => 1 })).code).toBe(1);
    expect(
      await byteseek(["mcp", "--vid", "a b"], {
        mcp: async () => {
          throw new ByteseekUsageError("--vid is not a run id");
        },
      }),
    ).toMatchObject({ stderr: "byteseek: --vid is not a run id\n", code: 2 });
    expect(
      await byteseek(["chat"], {
        chat: async () => {
          throw new Error("the store is locked");
        },
      }),
    ).toMatchObject({ stderr: "byteseek: the store is locked\n", code: 1 });
  });
});
