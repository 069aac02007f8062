import type { Readable, Writable } from "node:stream";
import { isTreeError } from "../tree/errors.js";
import { openHttpTree } from "../tree/http/index.js";
import type { Tree } from "../tree/types.js";
import { parseArgs } from "./args.js";
import type { CommandContext, CommandSpec } from "./command.js";
import { COMMANDS } from "./commands/index.js";
import { isCliError } from "./errors.js";
import { openStore } from "./open-store.js";
import { openToolsClient, type ToolsClient } from "./tools-client.js";

/** The process around a kvspace run: streams, environment, and a signal aborted on SIGINT/SIGTERM. */
export interface KvspaceIo {
  stdin: Readable;
  stdout: Writable;
  stderr: CommandContext["stderr"];
  env: NodeJS.ProcessEnv;
  cwd: string;
  signal: AbortSignal;
}

export interface KvspaceDeps {
  commands?: readonly CommandSpec[];
  /** Opens the store once the arguments are known to be valid. */
  openStore?: (io: KvspaceIo) => Promise<Tree>;
  /** Opens the tool runtime for `call|tools|prompt` (default: in-process, or the server's routes). */
  openTools?: (tree: Tree, io: KvspaceIo) => Promise<ToolsClient>;
}

/**
 * Runs one kvspace command line and resolves to its exit code: 0 on success, 1 on an error
 * (its message on stderr, never a stack), 2 on a usage error, 3 when a tool call (or check)
 * answers anything but ok. Never throws.
 */
export async function runKvspace(
  argv: readonly string[],
  io: KvspaceIo,
  deps: KvspaceDeps = {},
): Promise<number> {
  const { commands = COMMANDS, openStore: open = defaultOpen, openTools = defaultTools } = deps;
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr.write(overview(commands));
    return 2;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    io.stdout.write(overview(commands));
    return 0;
  }
  const command = commands.find((c) => c.name === name || c.aliases?.includes(name));
  if (command === undefined) {
    io.stderr.write(`unknown subcommand: ${name}\n${summaryLine(commands)}\n`);
    return 2;
  }
  if (wantsHelp(rest)) {
    io.stdout.write(`usage: kvspace ${command.usage}\n`);
    return 0;
  }
  let tree: Tree | undefined;
  let tools: Promise<ToolsClient> | undefined;
  let code: number;
  try {
    const input = parseArgs(command, rest);
    const opened = await open(io);
    tree = opened;
    code = (await command.run(input, { ...io, tree, tools: () => (tools ??= openTools(opened, io)) })) ?? 0;
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

function defaultOpen(io: KvspaceIo): Promise<Tree> {
  return openStore({ env: io.env, cwd: io.cwd, remote: openHttpTree });
}

function defaultTools(tree: Tree, io: KvspaceIo): Promise<ToolsClient> {
  return openToolsClient({ tree, env: io.env, cwd: io.cwd, stderr: io.stderr });
}

/** Prints an error as its message alone (the stack only with KVSPACE_DEBUG) and gives its exit code. */
function report(err: unknown, io: KvspaceIo): number {
  // The reader went away (`kvspace export | head`): stop quietly, as other filters do.
  if ((err as NodeJS.ErrnoException | undefined)?.code === "EPIPE") return 0;
  if (isCliError(err)) {
    io.stderr.write(`${err.message}\n`);
    return err.exitCode;
  }
  if (isTreeError(err)) {
    io.stderr.write(`${err.message}\n`);
    return 1;
  }
  const debug = io.env.KVSPACE_DEBUG !== undefined && io.env.KVSPACE_DEBUG !== "";
  io.stderr.write(`${debug && err instanceof Error ? err.stack : describe(err)}\n`);
  return 1;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

function wantsHelp(argv: readonly string[]): boolean {
  for (const token of argv) {
    if (token === "--") return false;
    if (token === "--help" || token === "-h") return true;
  }
  return false;
}

function summaryLine(commands: readonly CommandSpec[]): string {
  return `usage: kvspace <${commands.map((c) => c.name).join("|")}> [args]`;
}

function overview(commands: readonly CommandSpec[]): string {
  const width = Math.max(...commands.map((c) => c.usage.length));
  const lines = commands.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`);
  return [
    "usage: kvspace <subcommand> [args]",
    ...lines,
    "",
    "The store is KVSPACE: a folder (default ./data), etcd://host:2379[/prefix], or a byteseek server's http:// URL (BYTESEEK_TOKEN).",
    "Literals: int:42 float:3.5 bool:true string:text json:{...} nil: (delete)",
    "",
  ].join("\n");
}
