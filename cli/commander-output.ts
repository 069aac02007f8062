/** How both CLIs' commander programs are set up and write: on the io's own streams, at their width, without colour. */
import { Command, type OutputConfiguration } from "commander";
import { packageVersion } from "./version.js";

interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * Help and errors on `io`'s streams; commander's "error: …" becomes "<name>: …", followed by what
 * `hint` adds for that message (e.g. where the commands are listed).
 */
export function commanderOutput(
  io: { stdout: Stream; stderr: Stream },
  name: string,
  hint: (text: string) => string = () => "",
): OutputConfiguration {
  return {
    writeOut: (text) => void io.stdout.write(text),
    writeErr: (text) => void io.stderr.write(text),
    // the width of the io's own streams (80 when not a terminal), never the test runner's
    getOutHelpWidth: () => widthOf(io.stdout),
    getErrHelpWidth: () => widthOf(io.stderr),
    getOutHasColors: () => false,
    getErrHasColors: () => false,
    outputError: (text, write) => write(text.replace(/^error: /, `${name}: `) + hint(text)),
  };
}

function widthOf(stream: Stream): number {
  return stream.isTTY && stream.columns ? stream.columns : 80;
}

/**
 * A CLI's root program, the same for both: -V/--version, -h/--help and `help [command]`, output
 * through `output(name)`, errors thrown (exitOverride) rather than exiting the process.
 */
export function rootProgram(
  name: string,
  output: (name: string) => OutputConfiguration,
  about: { description: string; usage: string; subcommandTerm: (cmd: Command) => string; helpAfter: string },
): Command {
  return new Command(name)
    .description(about.description)
    .usage(about.usage)
    .version(packageVersion(), "-V, --version", "print the version")
    .helpOption("-h, --help", "print help")
    .helpCommand("help [command]", "print help for a command")
    .configureOutput(output(name))
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureHelp({ subcommandTerm: about.subcommandTerm })
    .addHelpText("after", about.helpAfter);
}
