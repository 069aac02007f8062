/**
 * Every key of the tree byteseek itself owns, in one place: `/byteseek/…` (what a person and the
 * runtime keep: prompts, declarations, policy, records, sessions, approvals, the MCP registry) and
 * `/vthread/…` (each run's state). Code builds these keys here and nowhere else, so a key family is
 * renamed, searched for or documented once (`test/lint/doc-keys.test.ts` refuses a prefix spelled
 * elsewhere). The documents stored at these keys, with their schemas, are in `tools/doc/docs.ts`;
 * the table is in docs/ARCHITECTURE.md ("The tree's own keys"). Imports nothing, and sits on the
 * lowest floor: any part may use it — the tree's own default history limits, the page in the
 * browser too.
 */

const BYTESEEK = "/byteseek/";
const VTHREAD = "/vthread/";

const PROMPTS = `${BYTESEEK}prompt/`;
const TOOLS = `${BYTESEEK}tools/`;
const RECORDS = `${BYTESEEK}tool/`;
const USAGE = `${BYTESEEK}usage/`;
const SESSIONS = `${BYTESEEK}session/`;
const APPROVALS = `${BYTESEEK}approval/`;
const MCP = `${BYTESEEK}mcp/`;
const MCP_SYNC = `${BYTESEEK}mcp-sync/`;

/** The directories: each family's prefix, for listing, watching and prefix rules. */
export const dirs = {
  /** Everything byteseek keeps that a person may own (a person's write there clears the owner run). */
  byteseek: BYTESEEK,
  /** Each run's state, one folder per run id. */
  runs: VTHREAD,
  /** Prompt texts: the system template, repair messages, section headers. */
  prompts: PROMPTS,
  /** Prompt templates offered to MCP hosts. */
  mcpPrompts: `${PROMPTS}mcp/`,
  /** Tool declarations, by name. */
  tools: TOOLS,
  /** The hash of what was shipped of each seeded declaration (hidden beside the declarations). */
  shipped: `${TOOLS}‥shipped/`,
  /** Call records, one folder per run. */
  records: RECORDS,
  /** Token and call accounting, one value per run. */
  usage: USAGE,
  /** Memory entries recalled into the prompt. */
  memory: `${BYTESEEK}memory/`,
  /** The messages of each run, one folder per run. */
  sessions: SESSIONS,
  /** Model provider settings (the environment wins). */
  llm: `${BYTESEEK}llm/`,
  /** Calls and changes waiting for a person, one folder per run. */
  approvals: APPROVALS,
  /** A person's acceptance of a run's tool for every run, by tool name. */
  toolAccept: `${BYTESEEK}tool-accept/`,
  /** The upstream MCP server registry, one entry per server. */
  mcpServers: MCP,
  /** What the last sync of each upstream MCP server kept. */
  mcpSync: MCP_SYNC,
  /** The run ids given to MCP sessions (hidden under `/vthread/`). */
  mcpSessions: `${VTHREAD}‥mcp/`,
  /** The numbering of saved replays (hidden under `/vthread/`). */
  replays: `${VTHREAD}‥replays/`,
} as const;

/** The directory of one run's entries in a per-run family. */
export const runDirs = {
  records: (vid: string): string => `${RECORDS}${vid}/`,
  sessions: (vid: string): string => `${SESSIONS}${vid}/`,
  approvals: (vid: string): string => `${APPROVALS}${vid}/`,
  state: (vid: string): string => `${VTHREAD}${vid}/`,
} as const;

/**
 * The per-run families holding what a run's loop writes about itself (its usage, one key, aside):
 * a replay keeps them apart from the real tree, a saved replay moves them to its own id.
 */
export const runFamilies = [SESSIONS, RECORDS, VTHREAD] as const;

/** One key of each family. */
export const keys = {
  /** A prompt text by name (`system`, `repair-exhausted`, `mcp/<name>`…). */
  prompt: (name: string): string => `${PROMPTS}${name}`,
  /** A tool declaration. */
  tool: (name: string): string => `${TOOLS}${name}`,
  /** What was shipped of a seeded declaration: `{hash}`. */
  shipped: (name: string): string => `${dirs.shipped}${name}`,
  /** The record of call `n` of run `vid`. */
  toolRecord: (vid: string, n: number | string): string => `${RECORDS}${vid}/${n}`,
  /** The gate policy (read-only json). */
  policy: `${BYTESEEK}policy`,
  /** A run's token and call counters. */
  usage: (vid: string): string => `${USAGE}${vid}`,
  /** Message `n` of run `vid`. */
  session: (vid: string, n: number | string): string => `${SESSIONS}${vid}/${n}`,
  /** A model setting (`api`, `url`, `model`, `key`, `models`…). */
  llm: (field: string): string => `${dirs.llm}${field}`,
  /** Approval `n` of run `vid`. */
  approval: (vid: string, n: number | string): string => `${APPROVALS}${vid}/${n}`,
  /** The tools a person approved for the rest of a run (scope `run`): hidden beside its approvals. */
  runApprovals: (vid: string): string => `${APPROVALS}${vid}/‥run`,
  /** A person's acceptance of a run's tool for every run. */
  toolAccept: (name: string): string => `${dirs.toolAccept}${name}`,
  /** An upstream MCP server's registry entry. */
  mcpServer: (server: string): string => `${MCP}${server}`,
  /** What the last sync of an upstream MCP server kept. */
  mcpSync: (server: string): string => `${MCP_SYNC}${server}`,
  /** A run's state: running, waiting <approval>, done, failed, interrupted. */
  runStatus: (vid: string): string => `${VTHREAD}${vid}/status`,
  /** How a run's last turn ended. */
  runReason: (vid: string): string => `${VTHREAD}${vid}/reason`,
  /** The record key of the call in progress. */
  runPc: (vid: string): string => `${VTHREAD}${vid}/‥pc`,
  /** The run's lease (engines without etcd leases). */
  runLease: (vid: string): string => `${VTHREAD}${vid}/‥lease`,
  /** The record keys of the run's last turn. */
  runTurn: (vid: string): string => `${VTHREAD}${vid}/turn`,
  /** The MCP host a session-run belongs to. */
  runClient: (vid: string): string => `${VTHREAD}${vid}/client`,
  /** Which run a saved replay replays. */
  runReplay: (vid: string): string => `${VTHREAD}${vid}/replay`,
} as const;

/** `<vid>/<n>` of a per-run key (`/byteseek/tool/<vid>/<n>`, `/byteseek/approval/<vid>/<n>`): what is left after its family's prefix. */
export function idOf(dir: string, key: string): string {
  return key.startsWith(dir) ? key.slice(dir.length) : key;
}

/**
 * The run id of a key below a run's folder in a per-run family (`dir` is `dirs.records`,
 * `dirs.approvals`, `dirs.sessions` or `dirs.runs`): `runOf(dirs.approvals, "/byteseek/approval/r1/3")`
 * is `r1`. Undefined for a key outside `dir`, for `dir` itself, and for a value directly in it.
 */
export function runOf(dir: string, key: string): string | undefined {
  if (!key.startsWith(dir)) return undefined;
  const rest = key.slice(dir.length);
  const end = rest.indexOf("/");
  return end > 0 ? rest.slice(0, end) : undefined;
}

/**
 * The name of a value directly in `dir`: `childOf(dirs.tools, "/byteseek/tools/edit.read")` is
 * `edit.read`. Undefined for a key outside `dir`, for a directory, and for anything deeper.
 */
export function childOf(dir: string, key: string): string | undefined {
  if (!key.startsWith(dir)) return undefined;
  const name = key.slice(dir.length);
  return name !== "" && !name.includes("/") ? name : undefined;
}
