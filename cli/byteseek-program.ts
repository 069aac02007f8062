/**
 * The `byteseek` command line on commander: `serve`, `run`, `chat`, `mcp`, each with `--help`,
 * `--version`, suggestions for typos. It parses and dispatches; what each command does is handed
 * in (byteseek.ts), so the parsing is tested without starting a server or a model.
 *
 * Exit status: what the command answers (0 when the turn(s) ended normally, 1 otherwise); 2 on a
 * usage error (its message and the usage on stderr); 1 when a command throws anything else.
 */
import { type Command, CommanderError } from "commander";
import { commanderOutput, rootProgram } from "./commander-output.js";

export interface ByteseekCommands {
  serve(options: ServeOptions): Promise<number>;
  run(task: string, options: TurnOptions): Promise<number>;
  /** `run --replay <vid> [--live-tools]`: re-drives a finished run from its records. */
  replay(vid: string, options: ReplayOptions): Promise<number>;
  chat(options: TurnOptions): Promise<number>;
  mcp(options: { vid?: string }): Promise<number>;
}

/** serve: `--no-auth` runs without a credential (only with BYTESEEK_TOKEN set and empty). */
export interface ServeOptions {
  noAuth?: boolean;
}

/** run/chat: the run id, and whether the person's model key goes to a server with each turn. */
export interface TurnOptions {
  vid?: string;
  sendKey?: boolean;
}

/** run --replay: whether the tools run again (through the usual gate) instead of answering from their records. */
export interface ReplayOptions {
  liveTools?: boolean;
}

/** A command's arguments are wrong: its message, the usage, exit 2. */
export class ByteseekUsageError extends Error {
  override readonly name = "ByteseekUsageError";
}

const ENVIRONMENT = `
The store is KVSPACE: a folder (default ./data), etcd://host:2379[/prefix], or for run, chat and mcp
a byteseek server's http:// URL. The model: BYTESEEK_LLM_API (openai|anthropic), BYTESEEK_LLM_URL,
BYTESEEK_LLM_MODEL, BYTESEEK_LLM_KEY; through a server, these go with each turn (the key only with
--send-key). Logs of run/chat: BYTESEEK_LOG_FILE (default byteseek.log in the store's folder),
BYTESEEK_LOG_LEVEL (default warn). Exit status: 0 when the turn(s) ended normally, 1 otherwise,
2 on a usage error.`;

const VID_HELP = "the run id: its calls are recorded under /byteseek/tool/<vid>/ (default: a new one)";

export interface ByteseekIo {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number };
}

/** Parses `argv` (without node and the script) and runs the command it names; resolves to the exit status. */
export async function runByteseekCli(
  argv: readonly string[],
  io: ByteseekIo,
  commands: ByteseekCommands,
): Promise<number> {
  let status = 0;
  const output = (name: string) => commanderOutput(io, name);
  const program = rootProgram("byteseek", output, {
    description: "the byteseek server, and agent turns in the terminal",
    usage: "<command> [options]",
    subcommandTerm: (cmd) => cmd.name(),
    helpAfter: ENVIRONMENT,
  });
  const sub = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .helpOption("-h, --help", "print help")
      .configureOutput(output(`byteseek ${name}`))
      .exitOverride()
      .allowExcessArguments(true)
      .showHelpAfterError(`(byteseek ${name} --help for more)`);
  /** An argument a command does not take, named. */
  const noExtra = (cmd: Command, takes: string) => {
    const extra = cmd.args[0];
    if (extra !== undefined)
      throw new ByteseekUsageError(`byteseek ${cmd.name()} takes ${takes}; unexpected argument '${extra}'`);
  };

  sub("serve", "run the HTTP server (KVSPACE, BYTESEEK_HOST, BYTESEEK_PORT, BYTESEEK_TOKEN; see the README)")
    .option(
      "--no-auth",
      "run without a credential: only together with BYTESEEK_TOKEN= (set, empty); anyone reaching the port can run commands as you",
    )
    .addHelpText(
      "after",
      "\nConfigured by environment; the README's Configuration lists every variable. At start it prints the\n" +
        "page's address with the token (http://127.0.0.1:7411/?token=…) on stderr; the token is kept in\n" +
        "<store>/token (made at first start) unless BYTESEEK_TOKEN names one.",
    )
    .action(async (options: { auth?: boolean }, cmd: Command) => {
      noExtra(cmd, "no arguments besides --no-auth (configure it by environment)");
      status = await commands.serve(options.auth === false ? { noAuth: true } : {});
    });
  sub("run", "run one agent turn, streaming the answer and each tool call")
    .argument("[task...]", "what to do (the words are joined; quote it to keep the shell away)")
    .option("--vid <vid>", VID_HELP)
    .option("--send-key", "through a server: send BYTESEEK_LLM_KEY with each turn too")
    .option(
      "--replay <vid>",
      "re-drive the finished run <vid> from its records: no model request, no tool runs",
    )
    .option(
      "--live-tools",
      "with --replay: run each call again in this workspace (the usual gate) and stop at the first result that differs",
    )
    .addHelpText(
      "after",
      '\nExample: byteseek run "list the TODO comments in src/" --vid todo1\n' +
        "Replay: byteseek run --replay todo1 prints the run's turns again and where anything differs now\n" +
        "(exit 0: as recorded; 1: it diverged, the step and what differed on stderr).",
    )
    .action(async (words: string[], options: TurnOptions & ReplayOptions & { replay?: string }) => {
      const task = words.join(" ").trim();
      if (options.replay !== undefined) {
        if (task !== "" || options.vid !== undefined)
          throw new ByteseekUsageError(
            "byteseek run --replay <vid> takes no task and no --vid: it replays the run's own",
          );
        status = await commands.replay(options.replay, options.liveTools ? { liveTools: true } : {});
        return;
      }
      if (options.liveTools) throw new ByteseekUsageError("--live-tools goes with --replay <vid>");
      if (task === "") throw new ByteseekUsageError('byteseek run needs a task: byteseek run "what to do"');
      status = await commands.run(task, {
        ...(options.vid !== undefined ? { vid: options.vid } : {}),
        ...(options.sendKey ? { sendKey: true } : {}),
      });
    });
  sub("chat", 'an interactive loop with a "byteseek> " prompt; "exit" leaves')
    .option("--vid <vid>", VID_HELP)
    .option("--send-key", "through a server: send BYTESEEK_LLM_KEY with each turn too")
    .action(async (options: TurnOptions, cmd: Command) => {
      noExtra(cmd, "no arguments besides --vid and --send-key");
      status = await commands.chat(options);
    });
  sub("mcp", "an MCP server on stdio, on the store at KVSPACE")
    .option("--vid <vid>", "the run id its calls are recorded under (default mcp-<client name>)")
    .action(async (options: { vid?: string }, cmd: Command) => {
      noExtra(cmd, "no arguments besides --vid");
      status = await commands.mcp(options);
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
    return status;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof ByteseekUsageError) {
      io.stderr.write(`byteseek: ${e.message}\n`);
      return 2;
    }
    io.stderr.write(`byteseek: ${(e as Error).message ?? String(e)}\n`);
    return 1;
  }
}

/** A stream's columns when it is a terminal, else 80. */
