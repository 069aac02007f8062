import { z } from "zod";

/**
 * Named powers: what a call may do outside the runtime. A call needs every power its tool needs;
 * the policy grants powers per run. `net` is granted per host and `tree` per key prefix, the
 * others as a whole.
 */
export const POWERS = ["read", "write", "exec", "net", "model", "tree"] as const;
export type Power = (typeof POWERS)[number];

/** What each power lets a call do, for refusals and the README. */
export const POWER_MEANING: Record<Power, string> = {
  read: "read workspace files",
  write: "change workspace files",
  exec: "run commands",
  net: "make outgoing HTTP requests",
  model: "make sub-calls of the model",
  tree: "read and write tree keys",
};

/** One power a call needs; `net` names the host, `tree` the key. */
export type Need =
  | { power: "read" | "write" | "exec" | "model" }
  | { power: "net"; url: URL }
  | { power: "tree"; key: string };

/** What a shipped built-in needs, by ref. The tree tools need `tree` on the key they name. */
const SHIPPED: Record<string, readonly Power[]> = {
  "edit.read": ["read"],
  "edit.grep": ["read"],
  "edit.glob": ["read"],
  "edit.ls": ["read"],
  "edit.write": ["write"],
  "edit.replace": ["read", "write"],
  "edit.multi": ["read", "write"],
  "edit.rename": ["write"],
  "shell.run": ["exec"],
  "tree.get": ["tree"],
  "tree.list": ["tree"],
  "tree.set": ["tree"],
  "tree.del": ["tree"],
  "tools.search": [],
};

/** The powers a built-in needs: its own `powers` when it declares them, else the shipped table. */
export function builtinPowers(ref: string, declared?: readonly Power[]): readonly Power[] {
  return declared ?? SHIPPED[ref] ?? [];
}

/** The powers granted to a run. */
export const Grant = z
  .object({
    read: z.boolean().describe("Read workspace files (edit.read, edit.grep, edit.glob, edit.ls)"),
    write: z.boolean().describe("Change workspace files (edit.write, edit.replace, edit.multi, edit.rename)"),
    exec: z.boolean().describe("Run commands (shell.run and every shell tool)"),
    model: z.boolean().describe("Sub-calls of the model (llm tools)"),
    net: z
      .array(z.string().min(1))
      .describe(
        "Hosts http tools and commands may reach: host, host:port, *.domain, or * for any public host (wildcards never reach loopback, private or link-local addresses or the server's own: name such a host, e.g. 127.0.0.1:8080)",
      ),
    tree: z
      .array(z.string().startsWith("/"))
      .describe(
        "Tree key prefixes the tree tools and llm prompts may use ('/' for all; denyKeys still apply)",
      ),
  })
  .strict();
export type Grant = z.infer<typeof Grant>;

/** What the shipped tools already do: workspace files, commands, the model and the tree; no network. */
export const DEFAULT_GRANT: Grant = {
  read: true,
  write: true,
  exec: true,
  model: true,
  net: [],
  tree: ["/"],
};

export const RunGrant = z
  .object({
    vid: z.string().min(1).describe("Run ids this applies to; * matches any characters, e.g. ci-*"),
    grant: Grant.partial().describe("The powers that differ from grants.default for these runs"),
  })
  .strict();

export const Grants = z
  .object({
    default: Grant.default(DEFAULT_GRANT).describe("The powers of every run no entry of runs matches"),
    runs: z.array(RunGrant).default([]).describe("Per run-id pattern; the first that matches applies"),
  })
  .strict();
export type Grants = z.infer<typeof Grants>;

/** The grant a run holds, and the policy path it came from (for the rule a refusal names). */
export interface RunGrantOf {
  grant: Grant;
  rule: string;
}

/** Does `vid` match a `*` pattern? */
export function vidMatches(pattern: string, vid: string): boolean {
  const re = new RegExp(`^${pattern.split("*").map(escapeRe).join(".*")}$`);
  return re.test(vid);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The grant of run `vid`: the first matching `runs` entry over the default, else the default. */
export function grantOf(grants: Grants, vid: string): RunGrantOf {
  const i = grants.runs.findIndex((r) => vidMatches(r.vid, vid));
  if (i < 0) return { grant: grants.default, rule: "grants.default" };
  const entry = grants.runs[i] as z.infer<typeof RunGrant>;
  return { grant: { ...grants.default, ...entry.grant }, rule: `grants.runs[${i}] (${entry.vid})` };
}
