/**
 * The person's input to `byteseek chat`, one message at a time, as chat tools read it:
 * - a line ending with `\` goes on on the next line (the prompt becomes `...> `);
 * - on a terminal, lines that arrive together (a paste) are one message;
 * - off a terminal (a script, a pipe), each line is a message.
 *
 * On a terminal the line editor is open only while the prompt waits: during a turn the terminal is
 * free for a one-key approval question (key-answer.ts) and Ctrl-C reaches the turn as SIGINT.
 */
import { createInterface, type Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";

export interface ChatInput {
  /** The next message (its lines joined with `\n`); undefined at the end of input (Ctrl-D, EOF, Ctrl-C at an empty prompt). */
  read(prompt: string): Promise<string | undefined>;
  close(): void;
}

export const CONTINUE_PROMPT = "...> ";

/** A line that asks for the next: its text without the `\`, else undefined. */
function continued(line: string): string | undefined {
  return line.endsWith("\\") ? line.slice(0, -1) : undefined;
}

export function createChatInput(input: Readable & { isTTY?: boolean }, output: Writable): ChatInput {
  return input.isTTY ? terminalInput(input, output) : streamInput(input, output);
}

/** Off a terminal: one reader for the whole stream, each line a message unless it ends with `\`. */
function streamInput(input: Readable, output: Writable): ChatInput {
  const rl = createInterface({ input, output, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  return {
    async read(prompt) {
      const parts: string[] = [];
      output.write(prompt);
      for (;;) {
        const next = await lines.next();
        if (next.done) return parts.length > 0 ? parts.join("\n") : undefined;
        const more = continued(next.value);
        if (more === undefined) {
          parts.push(next.value);
          return parts.join("\n");
        }
        parts.push(more);
        output.write(CONTINUE_PROMPT);
      }
    },
    close: () => rl.close(),
  };
}

/**
 * On a terminal: a line editor per message. The lines one read brings (a paste) are gathered
 * before the message is taken, so a pasted block is one message.
 */
function terminalInput(input: Readable, output: Writable): ChatInput {
  let rl: Interface | undefined;
  return {
    read(prompt) {
      return new Promise((resolve) => {
        const editor = createInterface({ input, output, terminal: true });
        rl = editor;
        const parts: string[] = [];
        let gathering = false;
        let settled = false;
        const finish = (message: string | undefined) => {
          if (settled) return;
          settled = true;
          editor.close();
          resolve(message);
        };
        const take = () => {
          gathering = false;
          const last = parts.at(-1) ?? "";
          const more = continued(last);
          if (more !== undefined) {
            parts[parts.length - 1] = more;
            editor.setPrompt(CONTINUE_PROMPT);
            editor.prompt();
            return;
          }
          finish(parts.join("\n"));
        };
        editor.on("line", (line) => {
          parts.push(line);
          // the rest of a paste arrives in the same read: wait for it before taking the message
          if (!gathering) {
            gathering = true;
            setImmediate(take);
          }
        });
        editor.on("SIGINT", () => {
          // Ctrl-C drops what is typed; at an empty prompt it leaves
          if (parts.length === 0 && editor.line === "") return finish(undefined);
          parts.length = 0;
          output.write("^C\n");
          editor.setPrompt(prompt);
          editor.prompt();
        });
        editor.on("close", () => finish(parts.length > 0 ? parts.join("\n") : undefined));
        editor.setPrompt(prompt);
        editor.prompt();
      });
    },
    close: () => rl?.close(),
  };
}
