import type { Writable } from "node:stream";
import { POLICY_INVALID } from "../../tools/catalogue.js";
import { checkValue } from "../../tools/checked-tree.js";
import { MCP_DIR } from "../../tools/mcp/registry.js";
import { printable } from "../../tools/printable.js";
import { isTreeError } from "../../tree/errors.js";
import type { ListResult, Tree } from "../../tree/types.js";
import { defineCommand, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import type { ToolsClient } from "../tools-client.js";

/**
 * The problems of every stored MCP server entry, as a write of it is judged (an entry stored with
 * `--unchecked`, or before the check existed): `[key, problem]` pairs, by server name.
 */
async function mcpEntryProblems(tree: Tree, signal: AbortSignal): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  let after: string | undefined;
  do {
    signal.throwIfAborted();
    let page: ListResult;
    try {
      page = await tree.list(MCP_DIR, after === undefined ? {} : { after });
    } catch (err) {
      if (isTreeError(err, "TREE_NOT_FOUND")) return out; // no server registered
      throw err;
    }
    for (const child of page.children) {
      if (child.kind === "index") continue;
      const key = `${MCP_DIR}${child.name}`;
      // a listing may leave a large value out: read it then
      const value =
        child.value ?? (await tree.get(key).then((n) => (n && n.kind !== "index" ? n.value : undefined)));
      const refusal = value && checkValue(key, value);
      if (refusal) for (const problem of refusal.problems) out.push([key, problem]);
    }
    after = page.next;
  } while (after !== undefined);
  return out;
}

/**
 * `kvspace tools` → the catalogue, one line per valid declaration:
 * `name<TAB>state<TAB>impl<TAB>snippet`, state `enabled`, `disabled` or `blocked` (the policy
 * denies every call; the reason follows the snippet), snippet `-` when there is none (not listed
 * in the prompt). `--check` → what does not validate instead: the policy's problems
 * (`/byteseek/policy<TAB>problem`: every call is denied), the invalid declarations'
 * (`name<TAB>problem`) and the invalid MCP server entries' (`/byteseek/mcp/<server><TAB>problem`)
 * — exit 3 when there is any — then the enabled tools the model is not
 * offered, and why.
 */
export const toolsCommand = defineCommand({
  name: "tools",
  usage: "tools [--check] | tools search <query> [--limit K] | tools accept <name> [<hash>]",
  summary:
    "list or search the tool catalogue; --check: an invalid policy, declarations and MCP server entries (exit 3 if any)",
  help: [
    "`kvspace tools search <query>` ranks the catalogue by what a tool does (its name, description,",
    "snippet, guidelines and parameters; any language): one line per hit, name<TAB>score<TAB>what it does,",
    "best first, only the tools a run is offered (exit 1 when nothing matches).",
    '  kvspace tools search "list the issues of a repository" --limit 5',
    "`kvspace tools accept <name> [<hash>]` accepts a tool a run declared, as it is now (with a hash:",
    "only that version), so every run is offered it: name<TAB>accepted<TAB>run <vid><TAB>sha256 <hash>.",
  ].join("\n"),
  args: { min: 0 },
  flags: { check: "bool", limit: "value", vid: "value" },
  flagHelp: {
    check: "list an invalid policy, invalid declarations and MCP server entries instead (exit 3 if any)",
    limit: "with search: at most this many hits (1 to 100, default 10)",
    vid: "with search: the tools this run is offered (default: the default grant's)",
  },
  extraArgument: () =>
    'only "search <query>" and "accept <name>" take arguments: kvspace tools search "what the tool does"',
  async run({ flags, positionals }, { tree, tools, stdout, signal }) {
    if (positionals[0] === "accept") return accept(positionals.slice(1), await tools(), stdout, signal);
    if (positionals.length > 0) return search(positionals, flags, await tools(), stdout, signal);
    const catalogue = await (await tools()).list(signal);
    if (flags.check === true) {
      const policy = catalogue.policy;
      if (policy) for (const problem of policy.problems) await writeLine(stdout, `${policy.key}\t${problem}`);
      for (const bad of catalogue.invalid)
        for (const problem of bad.problems) await writeLine(stdout, `${bad.name}\t${problem}`);
      const entries = await mcpEntryProblems(tree, signal);
      for (const [key, problem] of entries) await writeLine(stdout, `${key}\t${problem}`);
      // the prompt offers a tool only when it is enabled, has a snippet and is not blocked
      for (const t of catalogue.tools) {
        // an invalid policy blocks every tool: its own lines above say why, once
        if (!t.enabled || (policy && t.blocked === POLICY_INVALID)) continue;
        const why =
          t.blocked ?? (t.snippet === undefined ? "it has no snippet (still callable by name)" : undefined);
        if (why !== undefined) await writeLine(stdout, `${t.name}\tnot offered to the model: ${why}`);
      }
      return catalogue.invalid.length > 0 || policy || entries.length > 0 ? 3 : 0;
    }
    for (const t of catalogue.tools) {
      const state = t.blocked !== undefined ? "blocked" : t.enabled ? "enabled" : "disabled";
      const cells = [t.name, state, t.impl, t.snippet ?? "-"];
      if (t.blocked !== undefined) cells.push(t.blocked);
      await writeLine(stdout, cells.join("\t"));
    }
    return 0;
  },
});

/** `kvspace tools accept <name> [<hash>]`: a person accepts a run's tool for every run. */
async function accept(
  args: readonly string[],
  client: ToolsClient,
  stdout: Writable,
  signal: AbortSignal,
): Promise<number> {
  const [name, hash, ...more] = args;
  if (name === undefined || more.length > 0)
    throw new CliError("CLI_USAGE", "tools accept takes a tool name and, optionally, the hash reviewed");
  const done = await client.acceptTool(name, hash, signal);
  await writeLine(
    stdout,
    [done.name, "accepted", `run ${done.owner}`, `sha256 ${done.hash.slice(0, 12)}`]
      .map((c) => printable(c))
      .join("\t"),
  );
  return 0;
}

/** `kvspace tools search <query…>`: name<TAB>score<TAB>snippet per hit, best first; exit 1 on none. */
async function search(
  positionals: readonly string[],
  flags: Readonly<Record<string, string | boolean | string[] | undefined>>,
  client: ToolsClient,
  stdout: Writable,
  signal: AbortSignal,
): Promise<number> {
  const [verb, ...words] = positionals;
  if (verb !== "search" || words.length === 0)
    throw new CliError(
      "CLI_USAGE",
      verb === "search"
        ? 'tools search needs a query: kvspace tools search "what the tool does"'
        : `unknown tools subcommand "${verb}": kvspace tools [--check] or kvspace tools search <query>`,
    );
  const limitText = typeof flags.limit === "string" ? flags.limit : "10";
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new CliError(
      "CLI_USAGE",
      `--limit must be a whole number from 1 to 100, got ${JSON.stringify(limitText)}`,
    );
  const vid = typeof flags.vid === "string" ? flags.vid : undefined;
  const hits = await client.search(words.join(" "), { limit, ...(vid ? { vid } : {}) }, signal);
  for (const h of hits) await writeLine(stdout, `${h.name}\t${h.score}\t${h.snippet}`);
  return hits.length === 0 ? 1 : 0;
}
