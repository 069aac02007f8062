import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import { formatImportLine } from "../format.js";
import { createProgressBar } from "../progress.js";

/**
 * `kvspace import <file|-> [--force] [--unchecked]`: NDJSON from a file or stdin, all or nothing;
 * prints `imported<TAB>N<TAB>rev=R`. A progress bar is drawn on stderr when it is a terminal. A
 * read-only key is overwritten only with `--force`; a tool declaration, policy or MCP server entry
 * that does not validate is stored only with `--unchecked`.
 */
export const importCommand = defineCommand({
  name: "import",
  usage: "import <file|-> [--force] [--unchecked]",
  summary: "load NDJSON (as export writes it) from a file or stdin",
  help: "Prints imported<TAB>N<TAB>rev=R; -o json prints {imported, rev}.",
  args: { min: 1, max: 1 },
  flags: { force: "bool", unchecked: "bool" },
  outputs: ["json"],
  flagHelp: {
    force: "overwrite read-only keys",
    unchecked: "store declarations and a policy even if they do not validate",
  },
  async run({ positionals: [source = "-"], flags }, { tree, stdin, stdout, stderr, cwd, signal, output }) {
    let input: Readable;
    let total: number | undefined;
    if (source === "-") {
      input = stdin;
    } else {
      const path = resolve(cwd, source);
      total = await fileSize(source, path);
      input = createReadStream(path);
    }
    const progress = createProgressBar({ stream: stderr, total, enabled: stderr.isTTY === true });
    let read = 0;
    input.on("data", (chunk: Buffer | string) => {
      read += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
      progress.update(read);
    });
    try {
      const result = await tree.import(readLines(input, source, signal), {
        ...(flags.force === true ? { force: true } : {}),
        ...(flags.unchecked === true ? { unchecked: true } : {}),
      });
      progress.finish(read);
      await (output === "json"
        ? writeJson(stdout, { imported: result.imported, rev: result.rev })
        : writeLine(stdout, formatImportLine(result.imported, result.rev)));
    } catch (err) {
      progress.finish(read);
      throw err;
    } finally {
      input.destroy();
    }
    return 0;
  },
});

async function fileSize(source: string, path: string): Promise<number> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError("CLI_INPUT", `cannot import ${source}: not a file`);
    return info.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : String(err);
    throw new CliError("CLI_INPUT", `cannot import ${source}: ${why}`, { cause: err });
  }
}

/**
 * The input's lines. Being interrupted throws rather than ending the stream early, so an
 * interrupted import never commits a truncated file. The reader is attached at once, not when
 * the store first asks for a line: the progress listener already lets the input flow, and a
 * store that asks late (over HTTP, once the request is under way) would miss what came first.
 */
function readLines(input: Readable, source: string, signal: AbortSignal): AsyncGenerator<string> {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const iterator = lines[Symbol.asyncIterator]();
  return drain({ [Symbol.asyncIterator]: () => iterator }, lines, source, signal);
}

async function* drain(
  lines: AsyncIterable<string>,
  reader: { close(): void },
  source: string,
  signal: AbortSignal,
): AsyncGenerator<string> {
  try {
    for await (const line of lines) {
      if (signal.aborted) throw new CliError("CLI_INTERRUPTED", "import interrupted: nothing was imported");
      yield line;
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(
      "CLI_INPUT",
      `cannot read ${source === "-" ? "stdin" : source}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  } finally {
    reader.close();
  }
  if (signal.aborted) throw new CliError("CLI_INTERRUPTED", "import interrupted: nothing was imported");
}
