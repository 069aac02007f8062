/** One line of a diff: kept, removed (only in the old text) or added (only in the new one). */
export interface DiffLine {
  op: " " | "-" | "+";
  text: string;
}

/** Above this many cells the middle of the diff is shown as all removed then all added. */
const MAX_CELLS = 4_000_000;

/**
 * A line diff of `a` (old) against `b` (new): common head and tail trimmed, the middle aligned
 * by a longest common subsequence. Small values make this cheap; big ones degrade gracefully.
 */
export function diffLines(a: string, b: string): DiffLine[] {
  const x = a.split("\n");
  const y = b.split("\n");
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (
    tail < x.length - head &&
    tail < y.length - head &&
    x[x.length - 1 - tail] === y[y.length - 1 - tail]
  )
    tail++;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  const out: DiffLine[] = x.slice(0, head).map((text) => ({ op: " ", text }));
  if ((xs.length + 1) * (ys.length + 1) > MAX_CELLS) {
    for (const text of xs) out.push({ op: "-", text });
    for (const text of ys) out.push({ op: "+", text });
  } else {
    const n = xs.length;
    const m = ys.length;
    // lcs[i][j]: length of the LCS of xs[i..] and ys[j..], in one flat array.
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lcs[i * (m + 1) + j] =
          xs[i] === ys[j]
            ? (lcs[(i + 1) * (m + 1) + j + 1] ?? 0) + 1
            : Math.max(lcs[(i + 1) * (m + 1) + j] ?? 0, lcs[i * (m + 1) + j + 1] ?? 0);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && xs[i] === ys[j]) {
        out.push({ op: " ", text: xs[i++] as string });
        j++;
      } else if (i < n && (j >= m || (lcs[(i + 1) * (m + 1) + j] ?? 0) >= (lcs[i * (m + 1) + j + 1] ?? 0))) {
        out.push({ op: "-", text: xs[i++] as string });
      } else {
        out.push({ op: "+", text: ys[j++] as string });
      }
    }
  }
  for (const text of x.slice(x.length - tail)) out.push({ op: " ", text });
  return out;
}
