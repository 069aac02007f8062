/** What enters the model's context from one call, at most. */
export const MAX_TEXT_BYTES = 50 * 1024;
/** What an impl keeps of its output: room is left for its own words and marker under the cap. */
export const IMPL_OUTPUT_BYTES = MAX_TEXT_BYTES - 1024;
/** Lines of command output kept (the last ones). */
export const MAX_OUTPUT_LINES = 2000;

/**
 * Caps a result text at `maxBytes` of UTF-8, keeping the head, cut at a line end when one is near,
 * and says so in a marker line: the model learns that it saw only part.
 */
export function capText(text: string, maxBytes = MAX_TEXT_BYTES): { text: string; truncated: boolean } {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return { text, truncated: false };
  let head = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  // A cut inside a multi-byte character decodes to U+FFFD at the end: drop it.
  if (head.endsWith("\uFFFD")) head = head.slice(0, -1);
  const nl = head.lastIndexOf("\n");
  if (nl > head.length * 0.8) head = head.slice(0, nl + 1);
  const cut = bytes - Buffer.byteLength(head, "utf8");
  const sep = head.endsWith("\n") ? "" : "\n";
  return {
    text: `${head}${sep}[… truncated: ${cut} more bytes not shown (${bytes} in all); ask for a narrower part]`,
    truncated: true,
  };
}

/**
 * Keeps the tail of a stream of output, bounded in memory: the last `maxLines` lines and
 * `maxBytes` bytes, whichever is smaller. Counts what it dropped.
 */
export function createTailBuffer(maxBytes = IMPL_OUTPUT_BYTES, maxLines = MAX_OUTPUT_LINES) {
  const chunks: Buffer[] = [];
  let held = 0;
  let total = 0;
  let totalLines = 0;

  return {
    push(chunk: Buffer): void {
      total += chunk.length;
      for (const b of chunk) if (b === 10) totalLines++;
      chunks.push(chunk);
      held += chunk.length;
      // Keep at most twice the cap so trimming stays cheap and the tail is always complete.
      while (held - (chunks[0]?.length ?? 0) >= maxBytes * 2) held -= chunks.shift()?.length ?? 0;
    },
    /** The kept tail as text, with a leading marker when anything was dropped. */
    text(): { text: string; truncated: boolean; bytes: number; lines: number } {
      const all = Buffer.concat(chunks);
      const tail = all.length > maxBytes ? all.subarray(all.length - maxBytes) : all;
      let truncated = all.length < total || tail.length < all.length;
      let s = tail.toString("utf8");
      if (truncated) {
        // Start at a line boundary: a partial first line (or character) helps no one.
        const nl = s.indexOf("\n");
        if (nl >= 0 && nl < s.length - 1) s = s.slice(nl + 1);
      }
      const lines = s.split("\n");
      const trailing = lines.at(-1) === "" ? 1 : 0;
      if (lines.length - trailing > maxLines) {
        s = lines.slice(lines.length - trailing - maxLines).join("\n");
        truncated = true;
      }
      const allLines = totalLines + (total > 0 && all.at(-1) !== 10 ? 1 : 0);
      if (truncated) {
        const shown = s.split("\n").length - (s.endsWith("\n") ? 1 : 0);
        s = `[… output truncated: showing the last ${shown} of ${allLines} lines (${total} bytes in all)]\n${s}`;
      }
      return { text: s, truncated, bytes: total, lines: allLines };
    },
  };
}
