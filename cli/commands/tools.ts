import type { Writable } from "node:stream";
import { checkValue } from "../../tools/catalogue/checked-tree.js";
import { printable } from "../../tools/catalogue/printable.js";
import { MCP_DIR } from "../../tools/mcp/registry.js";
import { isTreeError } from "../../tree/errors.js";
import type { ListResult, Tree } from "../../tree/types.js";
import { defineCommand, type OutputFormat, writeJson, writeLine } from "../command.js";
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
 * — exit 3 when there is any; nothing at all on a healthy store, as a check in a script should be
 * (which tools the model is not offered, and why, is the listing's: state and reason).
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
    "--check prints nothing and exits 0 on a healthy store.",
    "-o json: the listing as [{name, state, impl, snippet?, blocked?}]; --check as {ok, problems: [{key, problem}]};",
    "search as [{name, score, snippet}]; accept as POST /v1/tools/<name>/accept answers. -o ndjson: one",
    "object a line (--check: one problem a line).",
  ].join("\n"),
  outputs: ["json", "ndjson"],
  args: { min: 0 },
  flags: { check: "bool", limit: "value", vid: "value" },
  flagHelp: {
    check: "list an invalid policy, invalid declarations and MCP server entries instead (exit 3 if any)",
    limit: "with search: at most this many hits (1 to 100, default 10)",
    vid: "with search: the tools this run is offered (default: the default grant's)",
  },
  extraArgument: () =>
    'only "search <query>" and "accept <name>" take arguments: kvspace tools search "what the tool does"',
  async run({ flags, positionals }, { tree, tools, stdout, signal, output = "text" }) {
    if (positionals[0] === "accept")
      return accept(positionals.slice(1), await tools(), stdout, signal, output);
    if (positionals.length > 0) return search(positionals, flags, await tools(), stdout, signal, output);
    const catalogue = await (await tools()).list(signal);
    if (flags.check === true) {
      const problems: Array<{ key: string; problem: string }> = [];
      const policy = catalogue.policy;
      if (policy) for (const problem of policy.problems) problems.push({ key: policy.key, problem });
      for (const bad of catalogue.invalid)
        for (const problem of bad.problems) problems.push({ key: bad.name, problem });
      for (const [key, problem] of await mcpEntryProblems(tree, signal)) problems.push({ key, problem });
      if (output === "json") await writeJson(stdout, { ok: problems.length === 0, problems });
      else
        for (const p of problems)
          await (output === "ndjson" ? writeJson(stdout, p) : writeLine(stdout, `${p.key}\t${p.problem}`));
      return problems.length > 0 ? 3 : 0;
    }
    const rows = catalogue.tools.map((t) => ({
      name: t.name,
      state: t.blocked !== undefined ? "blocked" : t.enabled ? "enabled" : "disabled",
      impl: t.impl,
      ...(t.snippet === undefined ? {} : { snippet: t.snippet }),
      ...(t.blocked === undefined ? {} : { blocked: t.blocked }),
    }));
    if (output === "json") await writeJson(stdout, rows);
    else
      for (const r of rows) {
        if (output === "ndjson") await writeJson(stdout, r);
        else {
          const cells = [r.name, r.state, r.impl, r.snippet ?? "-"];
          if (r.blocked !== undefined) cells.push(r.blocked);
          await writeLine(stdout, cells.join("\t"));
        }
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
  output: OutputFormat,
): Promise<number> {
  const [name, hash, ...more] = args;
  if (name === undefined || more.length > 0)
    throw new CliError("CLI_USAGE", "tools accept takes a tool name and, optionally, the hash reviewed");
  const done = await client.acceptTool(name, hash, signal);
  if (output !== "text") {
    await writeJson(stdout, done);
    return 0;
  }
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
  output: OutputFormat,
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
  const rows = hits.map((h) => ({ name: h.name, score: h.score, snippet: h.snippet }));
  if (output === "json") await writeJson(stdout, rows);
  else
    for (const h of rows)
      await (output === "ndjson"
        ? writeJson(stdout, h)
        : writeLine(stdout, `${h.name}\t${h.score}\t${h.snippet}`));
  return hits.length === 0 ? 1 : 0;
}
