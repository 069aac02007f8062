import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { type Command, CommanderError } from "commander";
import { seedStore, seedWanted } from "../compose/byteseek.js";
import { HELD_WATCH_PATIENCE_MS } from "../tree/held-socket.js";
import { isHttpTree, openHttpTree, readClientTimeout, type WatchLost } from "../tree/http/index.js";
import type { Tree } from "../tree/types.js";
import {
  type CommandContext,
  type CommandSpec,
  commandContext,
  type OutputFormat,
  outputProblem,
  type ParsedArgs,
} from "./command.js";
import { commanderOutput, rootProgram } from "./commander-output.js";
import { COMMANDS } from "./commands/index.js";
import { CliError, usageError } from "./errors.js";
import { openStore, type RemoteTreeFactory, storeSpec } from "./open-store.js";
import { report } from "./report.js";
import { openToolsClient, type ToolsClient } from "./tools-client.js";

/** The process around a kvspace run: streams, environment, and a signal aborted on SIGINT/SIGTERM. */
export interface KvspaceIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: CommandContext["stderr"];
  env: NodeJS.ProcessEnv;
  cwd: string;
  signal: AbortSignal;
}

export interface KvspaceDeps {
  commands?: readonly CommandSpec[];
  /** Opens the store once the arguments are known to be valid (`quiet`: the command line's `-q`). */
  openStore?: (io: KvspaceIo, line: { quiet: boolean }) => Promise<Tree>;
  /** Opens the tool runtime for `call|tools|prompt` (default: in-process, or the server's routes). */
  openTools?: (tree: Tree, io: KvspaceIo) => Promise<ToolsClient>;
  /**
   * Writes what byteseek ships into a store just opened (default: the shipped prompts, tools and
   * policy, unless `BYTESEEK_SEED=0`; through a server, whose own start seeded it, only on demand).
   */
  seed?: (tree: Tree, io: KvspaceIo) => Promise<void>;
  /** Asks a yes/no question (default: on the terminal when stdin is one, else none: `--yes` is needed). */
  confirm?: (question: string, io: KvspaceIo) => Promise<boolean>;
}

const STORE_HELP = [
  "The store is KVSPACE: a folder (default ./data), etcd://host:2379[/prefix], or a byteseek server's http:// URL (BYTESEEK_TOKEN).",
  "BYTESEEK_CLIENT_TIMEOUT: ms a server (at a URL, or holding the folder) may stay silent before a request fails (default 30000; 0: no bound).",
  "Literals: int:42 float:3.5 bool:true string:text json:{...} nil: (delete); quote a value with spaces: 'string:hello world'.",
  "Scripts: -o json|ndjson prints data as JSON (each command's --help says which it takes; README.md gives the shapes);",
  "-q/--quiet leaves notes and progress off stderr. get, set, head, del, list, mv, cp, grep, tree, history,",
  "append, mkindex and export load only the tree.",
  "Exit codes (stable): 0 ok, 1 an error, 2 a usage error (a bad flag value names those accepted),",
  "3 a tool call (or check) that answered anything but ok.",
].join("\n");

/**
 * Runs one kvspace command line and resolves to its exit code: 0 on success, 1 on an error
 * (its message on stderr, never a stack), 2 on a usage error, 3 when a tool call (or check)
 * answers anything but ok. Never throws. Arguments are parsed by commander (help, version,
 * suggestions for typos); the store is opened only once they are valid.
 */
export async function runKvspace(
  argv: readonly string[],
  io: KvspaceIo,
  deps: KvspaceDeps = {},
): Promise<number> {
  const { commands = COMMANDS, openStore: open = defaultOpen, openTools = defaultTools } = deps;
  let selected: { command: CommandSpec; input: ParsedArgs; output: OutputFormat; quiet: boolean } | undefined;
  try {
    const { args, off } = normalizeBoolFlags(argv, commands);
    const program = buildProgram(commands, io, off, (command, input, output, quiet) => {
      selected = { command, input, output, quiet };
    });
    await program.parseAsync(args, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    return report(err, io);
  }
  if (selected === undefined) return 0; // `kvspace help <command>`
  const { command, input, output, quiet } = selected;
  let tree: Tree | undefined;
  let tools: Promise<ToolsClient> | undefined;
  let code: number;
  try {
    const seeding = seedWanted(io.env); // a malformed setting is refused before the store is touched
    const opened = await open(io, { quiet });
    tree = opened;
    const seed = deps.seed ?? defaultSeed;
    const ask = deps.confirm ?? (io.stdin.isTTY ? terminalConfirm : undefined);
    // A server (or the process holding the folder, reached through its socket) seeded its store.
    if (seeding && !isHttpTree(opened) && !isRemote(io)) await seed(opened, io);
    code =
      (await command.run(
        input,
        commandContext(
          io,
          { output, quiet },
          {
            tree,
            tools: () => (tools ??= openTools(opened, io)),
            ...(ask ? { confirm: (question: string) => ask(question, io) } : {}),
            ...(seeding ? { seed: () => seed(opened, io) } : {}),
          },
        ),
      )) ?? 0;
  } catch (err) {
    code = report(err, io);
  }
  // The runtime first: it flushes what it still has to write into the tree.
  if (tools)
    await tools
      .then(
        (client) => client.close(),
        () => {},
      )
      .catch((err: unknown) => {
        code = Math.max(code, report(err, io));
      });
  if (tree)
    await tree.close().catch((err: unknown) => {
      code = Math.max(code, report(err, io));
    });
  return code;
}

/** The commander program: one command per spec, its output on the io's streams, errors thrown. */
function buildProgram(
  commands: readonly CommandSpec[],
  io: KvspaceIo,
  off: readonly string[],
  select: (command: CommandSpec, input: ParsedArgs, output: OutputFormat, quiet: boolean) => void,
): Command {
  // commander's "error: …" becomes "kvspace <command>: …", as the CLI's own usage errors read
  const output = (name: string) =>
    commanderOutput(io, name, (text) =>
      text.startsWith("error: unknown command") ? "(kvspace --help lists the commands)\n" : "",
    );
  const program = rootProgram("kvspace", output, {
    description: "inspect and edit the byteseek tree, and call its tools",
    usage: "<command> [args]",
    subcommandTerm: (cmd) => [cmd.name(), ...cmd.aliases()].join("|"),
    helpAfter: `\n${STORE_HELP}\n`,
  });
  for (const spec of commands) {
    const command = program
      .command(spec.name)
      .description(spec.summary)
      .usage(spec.usage.replace(/^\S+ /, ""))
      .allowExcessArguments(true)
      .helpOption("-h, --help", "print help")
      .configureOutput(output(`kvspace ${spec.name}`))
      .exitOverride()
      .showHelpAfterError(`usage: kvspace ${spec.usage}\n(kvspace ${spec.name} --help for more)`);
    if (spec.aliases) command.aliases([...spec.aliases]);
    for (const [name, type] of Object.entries(spec.flags ?? {})) {
      const help = spec.flagHelp?.[name] ?? "";
      if (type === "list")
        command.option(`--${name} <value>`, help, (v: string, all: string[] = []) => [...all, v]);
      else command.option(type === "bool" ? `--${name}` : `--${name} <value>`, help);
    }
    command.option("-o, --output <format>", outputHelp(spec));
    command.option("-q, --quiet", "no notes or progress on stderr (errors still)");
    if (spec.help) command.addHelpText("after", `\n${spec.help}\n`);
    command.action((_options: unknown, cmd: Command) => {
      const positionals = [...cmd.args];
      checkArity(spec, positionals);
      const { output = "text", quiet = false, ...options } = cmd.opts<{ output?: string; quiet?: boolean }>();
      const problem = outputProblem(spec, output);
      if (problem !== undefined) throw usageError(spec.usage, problem);
      const flags: ParsedArgs["flags"] = {};
      for (const [name, value] of Object.entries(options)) {
        if (typeof value === "boolean" || typeof value === "string") flags[name] = value;
        else if (Array.isArray(value)) flags[name] = value.map(String);
      }
      for (const name of off) flags[name] = false;
      select(spec, { positionals, flags }, output as OutputFormat, quiet);
    });
  }
  return program;
}

/** `-o`'s line in a command's help: the formats it takes. */
function outputHelp(spec: CommandSpec): string {
  return `print data as ${["text", ...(spec.outputs ?? [])].join(" | ")}`;
}

/**
 * Commander takes `--name` for a bool flag; kvspace also takes `--name=true` and `--name=false`
 * (upstream's `--showext=false`). The first becomes `--name`; the second is taken out and
 * remembered, so the command sees the flag false.
 */
function normalizeBoolFlags(
  argv: readonly string[],
  commands: readonly CommandSpec[],
): { args: string[]; off: string[] } {
  const [name, ...rest] = argv;
  const spec = commands.find((c) => c.name === name || c.aliases?.includes(name ?? ""));
  if (name === undefined || spec === undefined) return { args: [...argv], off: [] };
  const out = [name];
  const off: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i] as string;
    if (token === "--") {
      out.push(...rest.slice(i));
      break;
    }
    const m = /^--([a-z][a-z0-9-]*)=(.*)$/.exec(token);
    if (m && spec.flags?.[m[1] as string] === "bool") {
      if (m[2] === "true") out.push(`--${m[1]}`);
      else if (m[2] === "false") off.push(m[1] as string);
      else throw usageError(spec.usage, `--${m[1]} takes true or false, got '${m[2]}'`);
    } else out.push(token);
  }
  return { args: out, off };
}

/** Too few or too many operands: a usage error naming what is missing or unexpected. */
function checkArity(spec: CommandSpec, positionals: readonly string[]): void {
  const usage = `usage: kvspace ${spec.usage}`;
  if (positionals.length < spec.args.min) {
    const missing = operandsOf(spec.usage)[positionals.length] ?? "an argument";
    throw new CliError("CLI_USAGE", `kvspace ${spec.name}: missing ${missing}\n${usage}`);
  }
  const max = spec.args.max ?? Number.POSITIVE_INFINITY;
  if (positionals.length > max) {
    const extra = positionals[max] as string;
    const why = spec.extraArgument?.(extra, positionals) ?? `unexpected argument '${extra}'`;
    throw new CliError("CLI_USAGE", `kvspace ${spec.name}: ${why}\n${usage}`);
  }
}

/** The operands a usage line names, in order: `<key>`, `[ro|rw]`, `<vid>/<n>` (flags left out). */
export function operandsOf(usage: string): string[] {
  return [...usage.matchAll(/(<[^>]+>(?:\/<[^>]+>)?|\[(?!-)[^\]]+\])(?:\.\.\.)?/g)].map(
    (m) => m[1] as string,
  );
}

function isRemote(io: KvspaceIo): boolean {
  return storeSpec(io.env, io.cwd).backend === "http";
}

function defaultOpen(io: KvspaceIo, line: { quiet: boolean }): Promise<Tree> {
  return openStore({ env: io.env, cwd: io.cwd, remote: kvspaceRemote(io, line.quiet) });
}

/**
 * kvspace's way to a server. A watch (`kvspace watch`, a call waiting for approval) whose server
 * went away says so on stderr (unless `-q`) and tries again, less often each time, for a while, not
 * forever, then ends saying so: through a held folder, until the next holder may have taken it
 * (HELD_WATCH_PATIENCE_MS); at a URL, as long as a request may wait (BYTESEEK_CLIENT_TIMEOUT, which
 * leaves a restart time to come back; `0`: until interrupted).
 */
function kvspaceRemote(io: KvspaceIo, quiet: boolean): RemoteTreeFactory {
  return (url, env, options = {}) => {
    const timeout = readClientTimeout(env);
    const patience =
      options.socketPath !== undefined ? HELD_WATCH_PATIENCE_MS : timeout > 0 ? timeout : undefined;
    return openHttpTree(url, env, {
      ...options,
      ...(patience === undefined ? {} : { watchPatienceMs: patience }),
      ...(quiet
        ? {}
        : {
            onWatchLost: (lost: WatchLost) =>
              io.stderr.write(
                `kvspace: lost ${lost.server} — ${lost.reason}; trying again ${
                  lost.patienceMs === undefined
                    ? "until interrupted"
                    : `for up to ${Math.round(lost.patienceMs / 100) / 10} s`
                }\n`,
              ),
            onWatchBack: ({ server }: { server: string }) =>
              io.stderr.write(`kvspace: ${server} answers again; following from where it left off\n`),
          }),
    });
  };
}

function defaultSeed(tree: Tree): Promise<void> {
  return seedStore(tree);
}

function defaultTools(tree: Tree, io: KvspaceIo): Promise<ToolsClient> {
  return openToolsClient({ tree, env: io.env, cwd: io.cwd, stderr: io.stderr });
}

/** A yes/no question on the terminal (stderr), read from stdin. */
async function terminalConfirm(question: string, io: KvspaceIo): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(`${question} [y/N] `, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** A stream's columns when it is a terminal, else 80. */
