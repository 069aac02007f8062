/** How both CLIs' commander programs write: on the io's own streams, at their width, without colour. */
import type { OutputConfiguration } from "commander";

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
