/**
 * The longest run of plain characters every match of a simple regular expression must contain, so files
 * without it can be skipped by a byte search before any decoding. Answers undefined when unsure (alternation,
 * lookaround, backreferences…) or when the run is shorter than 3 characters.
 */
export function requiredLiteral(pattern: string): string | undefined {
  if (pattern.includes("|") || pattern.includes("(?")) return undefined;
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run !== "") runs.push(run);
    run = "";
  };
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const next = pattern[i + 1];
    let lit: string | undefined;
    if (c === "\\") {
      if (next === undefined) return undefined;
      i++;
      if (/[.*+?^${}()|[\]\\/-]/.test(next)) lit = next;
      else if (/[1-9k]/.test(next)) return undefined;
      else {
        end();
        if (next === "u" || next === "x" || next === "c" || next === "p" || next === "P") return undefined;
        continue;
      }
    } else if (c === "[") {
      end();
      const close = pattern.indexOf("]", i + 2);
      if (close === -1) return undefined;
      i = close;
      continue;
    } else if (c === "(") {
      end();
      depth++;
      continue;
    } else if (c === ")") {
      end();
      depth--;
      continue;
    } else if (".^$".includes(c)) {
      end();
      continue;
    } else if ("*?".includes(c) || (c === "{" && /^\{0[,}]/.test(pattern.slice(i)))) {
      // the preceding character (or group) may be absent
      run = run.slice(0, -1);
      end();
      if (c === "{") i = pattern.indexOf("}", i);
      continue;
    } else if (c === "+" || c === "{") {
      end();
      if (c === "{") i = pattern.indexOf("}", i);
      if (i === -1) return undefined;
      continue;
    } else lit = c;
    // a run inside a group may be optional or repeated as a whole; only top-level runs are required
    if (depth === 0) run += lit;
    else end();
  }
  end();
  const best = runs.sort((a, b) => b.length - a.length)[0];
  return best !== undefined && best.length >= 3 ? best : undefined;
}
