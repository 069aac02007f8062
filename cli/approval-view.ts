import type { Effect } from "../tools/call/effect-types.js";
import { printable, printableValue } from "../tools/catalogue/printable.js";

/** What a terminal shows of a call waiting for approval (an `approval_pending` event, an entry). */
export interface ApprovalShown {
  name?: string;
  tool?: string;
  args: unknown;
  reason: string;
  effect?: Effect;
  owner?: string;
  hash?: string;
  decl?: { hash: string };
  diff?: string;
  change?: { diff?: string; key?: string };
  declDiff?: string;
  elicitation?: { server: string; message: string; schema: Record<string, unknown> };
}

/**
 * The lines a terminal prints for an approval: why it waits, what will run (the command line after
 * substitution, the method and URL, the upstream tool…), who declared it and its hash, the
 * arguments, and any diff. Every value is neutralised (printable.ts): an argument holding
 * "\r\x1b[2K[y] approved" cannot rewrite the line the person reads.
 */
export function approvalLines(a: ApprovalShown): string[] {
  const lines = [printable(a.reason.split("\n")[0] ?? "")];
  if (a.elicitation) {
    lines.push(`asks: ${printable(a.elicitation.message)}`, `form: ${formLine(a.elicitation.schema)}`);
    return lines;
  }
  if (a.effect) lines.push(`runs: ${printable(a.effect.text)}`);
  const hash = a.hash ?? a.decl?.hash;
  if (a.owner || hash)
    lines.push(
      `declared by ${printable(a.owner ?? "?")}${hash ? `, sha256 ${printable(hash.slice(0, 12))}` : ""}`,
    );
  lines.push(`args: ${printableValue(a.args ?? {})}`);
  const diff = a.change?.diff ?? a.diff;
  if (a.declDiff) lines.push("changed since a person approved it for good:", ...diffLines(a.declDiff));
  if (diff) lines.push(...diffLines(diff));
  return lines;
}

function diffLines(diff: string): string[] {
  return printable(diff.endsWith("\n") ? diff.slice(0, -1) : diff, { lines: true }).split("\n");
}

/** What a decided approval says of its decision: state, scope, who, and through which credential. */
export function decisionLine(entry: {
  state: string;
  decision?: { scope: string; by: string; via?: string; reason?: string };
}): string | undefined {
  const d = entry.decision;
  if (!d) return undefined;
  const via = d.via ? ` via ${printable(d.via)}` : "";
  const why = d.reason ? ` (${printable(d.reason.split("\n")[0] ?? "")})` : "";
  return `decided: ${printable(entry.state)} ${printable(d.scope)} by ${printable(d.by)}${via}${why}`;
}

/** The fields of an upstream's form on one line: `name (string, required), age (integer)`. */
export function formLine(schema: Record<string, unknown>): string {
  const props = (schema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown }>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  const fields = Object.entries(props).map(([name, p]) => {
    const kind = Array.isArray(p?.enum) ? `one of ${p.enum.map(String).join("|")}` : String(p?.type ?? "any");
    return `${name} (${kind}${required.has(name) ? ", required" : ""})`;
  });
  return printable(fields.length ? fields.join(", ") : "no fields");
}
