import { z } from "zod";
import { dirs, keys } from "../../shared/keys.js";
import type { Tree } from "../../tree/types.js";
import { IMPL_KINDS, zodProblems } from "../catalogue/declaration.js";
import { matchName, targetOfUrl } from "../net/host-rules.js";
import { DEFAULT_CREDENTIAL_PATHS, SandboxLimits, SandboxMode } from "../sandbox/settings.js";
import { DEFAULT_GRANT, type Grant, Grants } from "./powers.js";

/** Where the policy lives. A `ro` json key: only a person (writing with force) changes it. */
export const POLICY_KEY = keys.policy;
/**
 * The model's settings (url, key…): no tool reads or writes them, whatever `denyKeys` lists. A
 * tool writing the URL would choose the model that drives its own run and, with it, where the
 * server's requests (and a key read from the tree) go.
 */
export const MODEL_SETTINGS_PREFIX = dirs.llm;

/** Is `key` (a value or a directory) the model's settings or under them? */
export function modelSettingsKey(key: string): boolean {
  return key.startsWith(MODEL_SETTINGS_PREFIX) || `${key}/` === MODEL_SETTINGS_PREFIX;
}

/** How a turn's tool list is built (`toolList` in the policy). */
export const ToolListPolicy = z
  .object({
    mode: z
      .enum(["auto", "all", "deferred"])
      .default("auto")
      .describe(
        "all: every offered tool's schema on every step; deferred: only the always-on tools and those tools.search found this turn, the rest one line each within budgetBytes; auto: deferred past threshold offered tools",
      ),
    threshold: z
      .number()
      .int()
      .min(0)
      .default(64)
      .describe("In auto mode, the number of offered tools past which the list is deferred"),
    budgetBytes: z
      .number()
      .int()
      .min(0)
      .default(4096)
      .describe("In deferred mode, the bytes of one-line entries for the tools not sent in full"),
    alwaysOn: z
      .array(z.string().regex(/^[a-z][a-z0-9_-]*\.([a-z][a-z0-9_-]*|\*)$/, "a tool name, or family.*"))
      .default(["edit.*", "shell.run", "tools.search"])
      .describe("Tools always sent in full (a name, or family.* for a family)"),
  })
  .strict();
export type ToolListPolicy = z.infer<typeof ToolListPolicy>;

/** What runs may declare, and who else is offered it (`agentTools` in the policy). */
export const AgentToolsPolicy = z
  .object({
    share: z
      .enum(["accepted", "at-once"])
      .default("accepted")
      .describe(
        "accepted: a tool a run declared is offered to other runs only once a person accepts that version of it (kvspace tools accept <name>); at-once: to every run as soon as it is written",
      ),
    maxPerRun: z
      .number()
      .int()
      .min(0)
      .default(64)
      .describe("The most declarations one run may have under /byteseek/tools/"),
    maxBytesPerRun: z
      .number()
      .int()
      .min(0)
      .default(256 * 1024)
      .describe("The most bytes (JSON) of all the declarations one run has under /byteseek/tools/"),
  })
  .strict();
export type AgentToolsPolicy = z.infer<typeof AgentToolsPolicy>;

/**
 * The gate's policy. `grants` says which powers (powers.ts) each run holds; the other rules
 * apply to every call whatever tool makes it. "Agent-written" means the declaration node has an
 * owner `vid`: the tree records it when a run writes the node through `tree.set` (people writing
 * over HTTP or the CLI, and the seeder, write without one).
 *
 * `agentImpls` and `httpHosts` are the rules of policies written before powers: still read
 * (`httpHosts` adds hosts to every run's `net`; `agentImpls`, when present, still refuses
 * agent-written declarations of other impl kinds), never written by byteseek.
 */
export const Policy = z
  .object({
    workspaceRoots: z
      .array(z.string().startsWith("/"))
      .default([])
      .describe("Absolute roots file tools may touch besides the runtime's workspace"),
    deny: z
      .array(z.string().min(1))
      .default([])
      .describe("File path prefixes no tool argument may name; relative ones are under the workspace"),
    denyKeys: z
      .array(z.string().startsWith("/"))
      .default([dirs.llm])
      .describe("Tree key prefixes the tree tools may not read or write"),
    confirm: z
      .array(z.string())
      .default([])
      .describe("Tool names or builtin refs that need an approval, besides declarations with confirm: true"),
    approved: z
      .array(z.string())
      .default([])
      .describe(
        "Tool names or builtin refs a person approved for good; an approval with scope always adds <name>@sha256:<declaration hash>, which lapses when the declaration changes",
      ),
    approvalTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(600_000) // ten minutes
      .describe("How long a call waits for a person's decision before it is denied with no answer"),
    grants: Grants.default({ default: DEFAULT_GRANT, runs: [] }).describe(
      "The powers each run holds: read, write, exec, model, net (hosts), tree (key prefixes)",
    ),
    agentImpls: z
      .array(z.enum(IMPL_KINDS))
      .optional()
      .describe("Legacy (before grants): the impl kinds an agent-written declaration may use"),
    httpHosts: z
      .array(z.string().min(1))
      .optional()
      .describe("Legacy (before grants): hosts every run's http tools may reach, added to grants' net"),
    defaultTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(120_000)
      .describe("Timeout of a call whose declaration sets none"),
    maxTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(2 ** 31 - 1)
      .default(3_600_000)
      .describe(
        "The longest a call may run: a timeout asked for beyond it is refused, a declaration's is cut to it",
      ),
    passEnv: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"))
      .default([])
      .describe(
        "Server environment variables commands get besides the allow-list (PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM, TZ, TMPDIR)",
      ),
    outputCapBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(16 * 1024 * 1024)
      .describe("Bytes of a command's output kept on disk while it runs (the last ones)"),
    toolList: ToolListPolicy.default(ToolListPolicy.parse({})).describe(
      "How a turn's tool list is built: every offered tool in full, or past a threshold only the always-on ones and those tools.search found",
    ),
    agentTools: AgentToolsPolicy.default(AgentToolsPolicy.parse({})).describe(
      "How many tools a run may declare (count and bytes), and whether other runs are offered them before a person accepts them",
    ),
    resumeUnknown: z
      .enum(["report", "ask"])
      .default("report")
      .describe(
        "A resumed run's interrupted call whose outcome cannot be known (a command, the model, MCP): report tells the model and never runs it again; ask runs it again only if a person approves",
      ),
    sandbox: SandboxMode.default("on"),
    limits: SandboxLimits.default(() => SandboxLimits.parse({})).describe(
      "Resource limits of every sandboxed command: cpuSeconds, memoryBytes, residentBytes, processes, openFiles, fileSizeBytes, tmpBytes; and totalResidentBytes, of all of them together",
    ),
    credentialPaths: z
      .array(z.string().regex(/^(~|~\/.*|\/.*)$/, "an absolute path or one under ~/"))
      .default([...DEFAULT_CREDENTIAL_PATHS])
      .describe(
        "Paths hidden from every sandboxed command even inside a workspace root (~/ is the server's HOME)",
      ),
  })
  .strict();

export type Policy = z.infer<typeof Policy>;
export type PolicyInput = z.input<typeof Policy>;

/** Every host a run may reach: its grant's `net` and the legacy `httpHosts`. */
export function netHosts(policy: Policy, grant: Grant): string[] {
  return [...grant.net, ...(policy.httpHosts ?? [])];
}

/** The policy written at first start. */
export function defaultPolicy(): Policy {
  return Policy.parse({});
}

/**
 * The policy byteseek shipped before grants, exactly as the seeder wrote it. A stored policy
 * equal to it was never changed by a person, so the seeder replaces it with today's default;
 * any other stored policy is a person's and is kept (its legacy fields are read as above).
 */
export const LEGACY_DEFAULT_POLICY = {
  workspaceRoots: [],
  deny: [],
  denyKeys: [dirs.llm],
  confirm: [],
  agentImpls: ["builtin", "http", "llm"],
  httpHosts: [],
  defaultTimeoutMs: 120_000,
} as const;

export type LoadedPolicy = { ok: true; policy: Policy } | { ok: false; problems: string[] };

/**
 * Reads the policy, memoised on the node's revision: absent → defaults; an invalid policy is
 * reported, and the runtime then denies every call (fail closed) rather than guessing.
 */
export function createPolicyReader(tree: Tree) {
  let memo: { modRev: number; loaded: LoadedPolicy } | undefined;
  const defaults: LoadedPolicy = { ok: true, policy: defaultPolicy() };

  return async function readPolicy(): Promise<LoadedPolicy> {
    const node = await tree.get(POLICY_KEY);
    if (!node) return defaults;
    if (memo && memo.modRev === node.modRev) return memo.loaded;
    let loaded: LoadedPolicy;
    if (node.kind !== "json") loaded = { ok: false, problems: [`${POLICY_KEY} must be a json value`] };
    else {
      const parsed = Policy.safeParse(node.value.value);
      loaded = parsed.success
        ? { ok: true, policy: parsed.data }
        : { ok: false, problems: zodProblems(parsed.error, Policy) };
    }
    memo = { modRev: node.modRev, loaded };
    return loaded;
  };
}

/**
 * Does a `net` entry let a request to `url` through by name (net/host-rules.ts: explicit entries,
 * then wildcards, which never match loopback, private or this machine's addresses)? What the name
 * resolves to is checked where the connection is made.
 */
export function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  return matchName(targetOfUrl(url), allowed).ok;
}
