/**
 * `kvspace mcp add <server> --url URL [--header 'Name: value']… [--scope S] [--client-id ID]
 * [--client-secret S] [--allow tool,…]` or `kvspace mcp add <server> [--env NAME=value]… [--allow …]
 * -- command args…`: a person registers an upstream MCP server (the entry at /byteseek/mcp/<server>,
 * validated as `kvspace set` would), then syncs it. `kvspace mcp status [<server>]`: each server's
 * state, tools, tools held for review, sign-in and token expiry, and last error.
 */
import { keys } from "../../shared/keys.js";
import { parseEntry } from "../../tools/mcp/registry.js";
import { type Json, json } from "../../tree/value.js";
import { type CommandContext, type ParsedArgs, writeJson, writeLine } from "../command.js";
import { CliError } from "../errors.js";

export async function mcpAdd(
  server: string,
  command: readonly string[],
  flags: ParsedArgs["flags"],
  ctx: CommandContext,
): Promise<number> {
  const url = typeof flags.url === "string" ? flags.url : undefined;
  if ((url === undefined) === (command.length === 0))
    throw new CliError(
      "CLI_USAGE",
      "mcp add takes either --url URL (Streamable HTTP) or -- command args… (stdio), not both",
    );
  const allow = typeof flags.allow === "string" ? splitList(flags.allow) : undefined;
  const entry: Record<string, unknown> = url !== undefined ? { url } : { command: [...command] };
  const headers = pairs(list(flags.header), ":", "--header 'Name: value'");
  const env = pairs(list(flags.env), "=", "--env NAME=value");
  if (url !== undefined) {
    if (Object.keys(env).length) throw new CliError("CLI_USAGE", "--env is for a command (stdio) server");
    if (Object.keys(headers).length) entry.headers = headers;
    const oauth: Record<string, string> = {};
    if (typeof flags.scope === "string") oauth.scope = flags.scope;
    if (typeof flags["client-id"] === "string") oauth.clientId = flags["client-id"];
    if (typeof flags["client-secret"] === "string") oauth.clientSecret = flags["client-secret"];
    if (Object.keys(oauth).length) entry.oauth = oauth;
  } else {
    if (Object.keys(headers).length || flags.scope !== undefined || flags["client-id"] !== undefined)
      throw new CliError("CLI_USAGE", "--header, --scope and --client-id are for a --url server");
    if (Object.keys(env).length) entry.env = env;
  }
  if (allow) entry.tools = allow;
  const parsed = parseEntry(entry);
  if (!parsed.ok)
    throw new CliError("CLI_USAGE", `the entry would not be valid:\n  ${parsed.problems.join("\n  ")}`);
  const key = keys.mcpServer(server);
  const existing = await ctx.tree.get(key);
  if (existing && flags.force !== true)
    throw new CliError(
      "CLI_USAGE",
      `${key} exists (kvspace get ${key}); pass --force to replace it (a sign-in kept in it is lost)`,
    );
  await ctx.tree.set(key, json(entry as Json));
  const text = ctx.output !== "json";
  if (text) await writeLine(ctx.stdout, `${server}\tregistered\t${url ?? command.join(" ")}`);
  const [report] = await (await ctx.tools()).mcpSync(server);
  // the entry itself is not printed: it may hold a client secret
  if (!text) await writeJson(ctx.stdout, { server, key, ...(report ? { sync: report } : {}) });
  if (report?.ok) {
    if (!text) return 0;
    const held = report.held?.length ? `\theld for review: ${report.held.join(" ")}` : "";
    await writeLine(ctx.stdout, `${server}\tsynced\t${report.tools} tools${held}`);
    return 0;
  }
  ctx.stderr.write(`${server}: ${report?.error ?? "the sync failed"}\n`);
  return 1;
}

export async function mcpStatus(server: string | undefined, ctx: CommandContext): Promise<number> {
  const all = await (await ctx.tools()).mcpList();
  const shown = server === undefined ? all : all.filter((s) => s.server === server);
  if (server !== undefined && shown.length === 0)
    throw new CliError("CLI_USAGE", `no MCP server "${server}" is registered (kvspace mcp list)`);
  if (ctx.output === "json") {
    await writeJson(ctx.stdout, { servers: shown });
    return 0;
  }
  for (const s of shown) {
    if (ctx.output === "ndjson") {
      await writeJson(ctx.stdout, s);
      continue;
    }
    const held = s.held.length ? `held for review: ${s.held.join(" ")}` : "none held";
    let signIn = "no sign-in";
    if (s.auth?.state === "signed-in")
      signIn = `signed in${s.auth.expiresAt ? ` until ${new Date(s.auth.expiresAt).toISOString()}` : ""}${s.auth.refreshable ? " (refreshed before then)" : ""}`;
    else if (s.auth?.state === "needs-sign-in")
      signIn = `needs sign-in${s.auth.needScope ? ` (scopes ${s.auth.needScope})` : ""}: kvspace mcp login ${s.server}`;
    const error = s.error ? s.error.split("\n")[0] : "-";
    await writeLine(ctx.stdout, [s.server, s.state, `${s.tools} tools`, held, signIn, error].join("\t"));
  }
  return 0;
}

function list(v: ParsedArgs["flags"][string] | undefined): string[] {
  return v === undefined || typeof v === "boolean" ? [] : Array.isArray(v) ? v : [v];
}

function splitList(v: string): string[] {
  return v
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}

function pairs(items: readonly string[], sep: string, form: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf(sep);
    if (at <= 0) throw new CliError("CLI_USAGE", `"${item}" is not ${form}`);
    out[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return out;
}
