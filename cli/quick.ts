/**
 * The quick path of `kvspace`: the plain tree commands (get, set, head, del, list, mv, cp, grep,
 * tree, history, append, mkindex, export) parsed by hand and run on the store with nothing else loaded — no commander, no tool runtime, no schemas, no
 * seeding code — so a one-shot command in a script costs little more than starting Node
 * (bench/cli.ts measures it against etcdctl; test/cli/quick.test.ts pins what it loads).
 *
 * It runs the same command specs as the full dispatcher (run.ts), so what it prints is the same.
 * Anything it is not sure to do exactly as the full dispatcher would, it leaves to it (answers
 * undefined, having printed nothing and changed nothing): help and unknown or malformed flags and
 * operands (commander's messages), a write under /byteseek/ (checked declarations and ownership:
 * tools/catalogue/checked-tree.ts), a store that will not open as asked (locked by a server: reached through
 * its socket; a bad setting: its message; not a server at a URL that took the connection and never
 * answered: that is said here, not waited for twice), and a store never seeded (seeding loads the tools).
 * A store seeded once is not re-seeded here: the server and every other command still seed on open,
 * so an upgrade's new shipped entries arrive with the next of those.
 */
import { dirs, keys } from "../shared/keys.js";
import {
  type CommandContext,
  type CommandSpec,
  commandContext,
  type OutputFormat,
  outputProblem,
  type ParsedArgs,
} from "./command.js";
import { report } from "./report.js";
import type { KvspaceIo } from "./run.js";

/** The commands the quick path runs, each loaded alone. */
const QUICK: Record<string, () => Promise<CommandSpec>> = {
  get: async () => (await import("./commands/get.js")).getCommand,
  set: async () => (await import("./commands/set.js")).setCommand,
  head: async () => (await import("./commands/head.js")).headCommand,
  del: async () => (await import("./commands/del.js")).delCommand,
  list: async () => (await import("./commands/list.js")).listCommand,
  ls: async () => (await import("./commands/list.js")).listCommand,
  mv: async () => (await import("./commands/move.js")).mvCommand,
  move: async () => (await import("./commands/move.js")).mvCommand,
  cp: async () => (await import("./commands/move.js")).cpCommand,
  copy: async () => (await import("./commands/move.js")).cpCommand,
  grep: async () => (await import("./commands/grep.js")).grepCommand,
  tree: async () => (await import("./commands/tree.js")).treeCommand,
  history: async () => (await import("./commands/history.js")).historyCommand,
  append: async () => (await import("./commands/append.js")).appendCommand,
  mkindex: async () => (await import("./commands/mkindex.js")).mkindexCommand,
  export: async () => (await import("./commands/export.js")).exportCommand,
};

/** Commands whose operands are keys they write. */
const WRITERS = new Set(["set", "del", "mv", "cp", "append", "mkindex"]);

/** Written by the first seeding (tools/catalogue/seed.ts): its presence says the store was seeded once. */
const SEEDED_MARK = keys.policy;

/**
 * Runs `argv` on the quick path and resolves to its exit code, or to undefined when the full
 * dispatcher must run it (nothing was printed or written then).
 */
export async function runQuick(argv: readonly string[], io: KvspaceIo): Promise<number | undefined> {
  const load = QUICK[argv[0] ?? ""];
  if (load === undefined) return undefined;
  const spec = await load();
  const line = parsePlain(spec, argv.slice(1));
  if (line === undefined) return undefined;
  const { input, output, quiet } = line;
  if (WRITERS.has(spec.name) && input.positionals.some((k) => k.startsWith(dirs.byteseek))) return undefined;
  const seed = io.env.BYTESEEK_SEED;
  if (seed !== undefined && seed !== "" && seed !== "0" && seed !== "1") return undefined;

  let opened: Awaited<ReturnType<typeof openQuick>>;
  try {
    opened = await openQuick(io, seed !== "0");
  } catch (err) {
    return report(err, io);
  }
  if (opened === undefined) return undefined;
  const { tree } = opened;
  let code: number;
  try {
    const ctx = commandContext(
      io,
      { output, quiet },
      { tree, tools: () => Promise.reject(new Error(`kvspace ${spec.name} uses no tools`)) },
    );
    code = (await spec.run(input, ctx)) ?? 0;
  } catch (err) {
    code = report(err, io);
  }
  await tree.close().catch((err: unknown) => {
    code = Math.max(code, report(err, io));
  });
  return code;
}

/** The store KVSPACE names, opened as the full dispatcher would; undefined when that one must do it. */
async function openQuick(
  io: KvspaceIo,
  seeding: boolean,
): Promise<{ tree: CommandContext["tree"] } | undefined> {
  const { openTree, resolveStore } = await import("../tree/store-config.js");
  let spec: ReturnType<typeof resolveStore>;
  try {
    spec = resolveStore(io.env, io.cwd);
  } catch {
    return undefined;
  }
  if (spec.backend === "http") {
    const { openHttpTree } = await import("../tree/http/client.js");
    try {
      // a server seeded its store, and checks what it is sent
      return { tree: await openHttpTree(new URL(spec.url), io.env) };
    } catch (err) {
      // A server that took the connection and said nothing would keep the full dispatcher waiting
      // as long again: its message now.
      if ((err as { code?: unknown }).code === "TREE_TIMEOUT") throw err;
      return undefined;
    }
  }
  let tree: CommandContext["tree"];
  try {
    tree = await openTree(spec);
  } catch {
    return undefined;
  }
  if (seeding) {
    let seeded: boolean;
    try {
      seeded = (await tree.get(SEEDED_MARK)) !== undefined;
    } catch {
      seeded = false;
    }
    if (!seeded) {
      await tree.close().catch(() => {});
      return undefined;
    }
  }
  return { tree };
}

/**
 * The command line as commander would read it for `spec`, or undefined when commander must read it:
 * `--help`, an unknown flag, a value flag without its value, a bool flag with a value other than
 * true/false, or operands too few or too many (commander and run.ts say what is wrong).
 */
export function parsePlain(spec: CommandSpec, args: readonly string[]): PlainLine | undefined {
  const positionals: string[] = [];
  const flags: ParsedArgs["flags"] = {};
  const types = spec.flags ?? {};
  let output = "text";
  let quiet = false;
  for (let i = 0; i < args.length; i++) {
    const token = args[i] as string;
    if (token === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      positionals.push(token);
      continue;
    }
    if (token === "-q" || token === "--quiet") {
      quiet = true;
      continue;
    }
    const o = /^(?:-o|--output)(?:=(.*))?$/s.exec(token) ?? /^-o(.+)$/s.exec(token);
    if (o) {
      const value = o[1] ?? args[++i];
      if (value === undefined) return undefined;
      output = value;
      continue;
    }
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(token);
    const name = m?.[1];
    if (m === null || name === undefined || !Object.hasOwn(types, name)) return undefined;
    const value = m[2];
    if (types[name] === "bool") {
      if (value === undefined || value === "true") flags[name] = true;
      else if (value === "false") flags[name] = false;
      else return undefined;
    } else if (value !== undefined) flags[name] = value;
    else {
      const next = args[i + 1];
      if (next === undefined) return undefined;
      flags[name] = next;
      i++;
    }
  }
  if (positionals.length < spec.args.min || positionals.length > (spec.args.max ?? Number.POSITIVE_INFINITY))
    return undefined;
  if (outputProblem(spec, output) !== undefined) return undefined;
  return { input: { positionals, flags }, output: output as OutputFormat, quiet };
}

/** A command line the quick path runs: its operands and flags, and the global `-o` and `--quiet`. */
export interface PlainLine {
  input: ParsedArgs;
  output: OutputFormat;
  quiet: boolean;
}
