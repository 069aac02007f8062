/**
 * The shape of a kvspace subcommand. A subcommand declares its usage, its positional arity and
 * its flags; the dispatcher (run.ts) builds a commander command from that declaration, parses the
 * arguments with it, opens the store only once they are valid, and hands both to `run`.
 */
import { type Readable, Writable } from "node:stream";
import type { Tree } from "../tree/types.js";
import type { ToolsClient } from "./tools-client.js";

/**
 * `bool` flags take `--name`, `--name=true` or `--name=false`; `value` flags take `--name V` or
 * `--name=V`; `list` flags take `--name V` as often as given, in order.
 */
export type FlagType = "bool" | "value" | "list";

/** The parsed command line of one subcommand. */
export interface ParsedArgs {
  positionals: string[];
  /** Bool flags as booleans, value flags as strings, list flags as arrays; absent flags are absent. */
  flags: Record<string, boolean | string | string[]>;
}

/**
 * How a command prints its data (`-o`): `text` the upstream TAB-separated lines; `json` one JSON
 * document (per key for get/head); `ndjson` one JSON object a line (listings and streams).
 */
export type OutputFormat = "text" | "json" | "ndjson";

/** What a subcommand may use. Everything it prints goes through these streams. */
export interface CommandContext {
  tree: Tree;
  /** `-o`; `text` when absent. */
  output?: OutputFormat;
  /** `--quiet`: stderr is a sink for notes, hints and progress (errors still reach the person). */
  quiet?: boolean;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** The working directory relative paths (import files) resolve against. */
  cwd: string;
  /** Aborted on SIGINT/SIGTERM: long commands (watch, export, import) stop. */
  signal: AbortSignal;
  /**
   * Asks a person a yes/no question on the terminal; resolves false on anything but y/yes.
   * Absent when stdin is not a terminal: destructive commands then need `--yes`.
   */
  confirm?: (question: string) => Promise<boolean>;
  /** Writes the shipped prompts, tools and policy into the tree; absent when seeding is off. */
  seed?: () => Promise<void>;
  /** The tool runtime (in-process, or the server's): opened on first use, closed by the dispatcher. */
  tools(): Promise<ToolsClient>;
}

export interface CommandSpec {
  name: string;
  aliases?: readonly string[];
  /** After `usage: kvspace `, e.g. `get <key>...`; its `<…>`/`[…]` operands name missing arguments. */
  usage: string;
  /** One line for the subcommand list. */
  summary: string;
  /** More for `kvspace <name> --help`: what it prints, examples. */
  help?: string;
  /** Positional arity. */
  args: { min: number; max?: number };
  flags?: Readonly<Record<string, FlagType>>;
  /** One line per flag for `--help`. */
  flagHelp?: Readonly<Record<string, string>>;
  /**
   * Says what an argument beyond `args.max` is meant to be, when a typo is likely (an unquoted
   * value with spaces); absent: "unexpected argument".
   */
  extraArgument?(extra: string, positionals: readonly string[]): string;
  /** The formats `-o` takes beside `text` (absent: none; `-o` is then refused, naming what it takes). */
  outputs?: readonly ("json" | "ndjson")[];
  /** Runs the subcommand; resolves to the exit code (0 when nothing is returned). */
  run(input: ParsedArgs, ctx: CommandContext): Promise<number | undefined>;
}

/** Identity, for type inference at the definition site. */
export function defineCommand(spec: CommandSpec): CommandSpec {
  return spec;
}

/** `-o`'s value checked against what `spec` takes; the problem (naming the accepted values) when refused. */
export function outputProblem(spec: CommandSpec, value: string): string | undefined {
  const accepted = ["text", ...(spec.outputs ?? [])];
  if (accepted.includes(value)) return undefined;
  return `-o takes ${accepted.join(", ")} here, got '${value}'`;
}

/**
 * A command's context: the process's streams and settings, the command line's `-o` and `--quiet`
 * (which sends the notes on stderr to a sink), and what the dispatcher opened for it.
 */
export function commandContext(
  io: Pick<CommandContext, "stdin" | "stdout" | "stderr" | "env" | "cwd" | "signal">,
  line: { output: OutputFormat; quiet: boolean },
  parts: Pick<CommandContext, "tree" | "tools" | "confirm" | "seed">,
): CommandContext {
  return {
    ...io,
    ...(line.quiet ? { stderr: sinkStream(), quiet: true } : {}),
    output: line.output,
    ...parts,
  };
}

/** Where `--quiet` sends a command's notes: nowhere. */
export function sinkStream(): CommandContext["stderr"] {
  return new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
}

/** Writes a value as one line of JSON (int64 values are already decimal strings in the tree's JSON). */
export function writeJson(stream: Writable, value: unknown): Promise<void> {
  return writeLine(stream, JSON.stringify(value));
}

/** A write's result as `-o json` prints it: `{key, rev, version}`, plus `deleted` or `removed` when the write says. */
export function writeResultJson(r: {
  key: string;
  rev: number;
  version: number;
  deleted?: boolean;
  removed?: number;
}) {
  return {
    key: r.key,
    rev: r.rev,
    version: r.version,
    ...(r.deleted === undefined ? {} : { deleted: r.deleted }),
    ...(r.removed === undefined ? {} : { removed: r.removed }),
  };
}

/** Writes one line to a stream, waiting for it to drain when its buffer is full. */
export async function writeLine(stream: Writable, line: string): Promise<void> {
  if (!stream.write(`${line}\n`)) {
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        stream.off("drain", onDrain);
        stream.off("error", done);
        stream.off("close", onDrain);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => done();
      stream.once("drain", onDrain);
      stream.once("close", onDrain);
      stream.once("error", done);
    });
  }
}
