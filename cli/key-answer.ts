/**
 * A question answered with one key on a terminal, no Enter (the question says so): the terminal is
 * put in raw mode for the answer and given back as it was. Keys not offered are ignored; Ctrl-C
 * answers "interrupt" (raw mode keeps the terminal from sending SIGINT itself), Ctrl-D "eof".
 */
import { emitKeypressEvents } from "node:readline";
import type { ReadStream } from "node:tty";

export interface KeyQuestion<T> {
  input: Pick<ReadStream, "isTTY" | "isRaw" | "setRawMode" | "on" | "off" | "resume" | "pause">;
  output: { write(text: string): unknown };
  question: string;
  /** The keys taken (lower case) and what each stands for. */
  keys: ReadonlyMap<string, T>;
  /** Stops waiting (the call was decided elsewhere, or the turn ended). */
  signal?: AbortSignal;
}

export type KeyAnswer<T> = { key: string; value: T } | { key: "interrupt" | "eof" | "aborted" };

export function askKey<T>(q: KeyQuestion<T>): Promise<KeyAnswer<T>> {
  const { input, output } = q;
  return new Promise((resolve) => {
    if (q.signal?.aborted) return resolve({ key: "aborted" });
    emitKeypressEvents(input as unknown as NodeJS.ReadableStream);
    const wasRaw = input.isRaw;
    input.setRawMode(true);
    input.resume();
    output.write(q.question);
    const done = (answer: KeyAnswer<T>, echo: string) => {
      input.off("keypress", onKey);
      q.signal?.removeEventListener("abort", onAbort);
      input.setRawMode(wasRaw);
      input.pause();
      output.write(`${echo}\n`);
      resolve(answer);
    };
    const onAbort = () => done({ key: "aborted" }, "(decided elsewhere)");
    function onKey(text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined): void {
      if (key?.ctrl && key.name === "c") done({ key: "interrupt" }, "^C");
      else if (key?.ctrl && key.name === "d") done({ key: "eof" }, "^D");
      else {
        const k = (text ?? "").toLowerCase();
        const value = q.keys.get(k);
        if (value !== undefined) done({ key: k, value }, k);
      }
    }
    input.on("keypress", onKey);
    q.signal?.addEventListener("abort", onAbort, { once: true });
  });
}
