/** Small helpers the bench scripts share to take and print their figures. */

/** Runs `op(0..total-1)` from `callers` concurrent callers, each taking the next index; answers ops per second. */
export async function perSecond(
  total: number,
  callers: number,
  op: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = next++; i < total; i = next++) await op(i);
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export function ratio(a: number, b: number): number {
  return b === 0 ? Number.POSITIVE_INFINITY : a / b;
}

/**
 * The median of the ratios of paired samples (`a[i]` and `b[i]` taken in the same round, back to
 * back): this machine's speed drifts by a third over minutes, which a ratio of medians taken from
 * different rounds picks up and a ratio within a round does not.
 */
export function pairedRatio(a: number[], b: number[]): number {
  return median(a.map((x, i) => ratio(x, b[i] ?? 0)));
}

/** A number with thousands separators, no decimals. */
export function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Prints a Markdown table, so the output pastes into bench/RESULTS.md as is. */
export function printTable(head: string[], rows: string[][]): void {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  console.log(line(head));
  console.log(line(head.map(() => "---")));
  for (const r of rows) console.log(line(r));
}
