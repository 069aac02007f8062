import { printable } from "../../tools/catalogue/printable.js";
import { shortHash } from "../../tools/mcp/pins.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import { mcpAdd, mcpStatus } from "./mcp-registry.js";
import { mcpLogin, mcpLogout } from "./mcp-sign-in.js";

const USAGE =
  "mcp list | mcp status [<server>] | mcp add <server> --url URL | mcp add <server> -- command args… | mcp sync [<server>] | mcp review <server> | mcp accept <server> [<tool>...] | mcp login <server> [--paste | --device] | mcp logout <server>";

/**
 * `kvspace mcp list`: one line per registered upstream MCP server — name, state, tool count,
 * transport and target, and the last error. `kvspace mcp sync [<server>]`: syncs its tools (or
 * every server's) into declarations now; one line per server saying what changed; exit 1 naming the
 * server when one cannot start or answer (within its timeout). `kvspace mcp review <server>`: per
 * tool held for review (changed upstream since a person accepted it), a line
 * `<name>\t<why>\t<hash>\taccepted <hash>|never accepted\t<fields>` and the diff of each field,
 * after a line `<name>\tgone upstream\tpin <hash> dropped …` per tool that left the upstream's list;
 * `kvspace mcp accept <server> [<tool>...]` accepts them (all held ones when none is named).
 */
export const mcpCommand = defineCommand({
  name: "mcp",
  usage: USAGE,
  summary: "list the upstream MCP servers, or sync their tools into declarations",
  help: [
    "-o json prints what the HTTP API answers: list and status {servers: [...]} (GET /v1/mcp), sync",
    "{reports: [...]} (POST /v1/mcp/sync), review {server, held, gone} (GET /v1/mcp/<server>/review),",
    "accept {server, accepted, held}, add {server, key, sync}, login: first a line saying what to open,",
    "{server, authorizationUrl} or with --device {server, verificationUri, userCode, verificationUriComplete?,",
    "expiresAt} (as POST /v1/mcp/<server>/login), then {server, signedIn, expiresAt?, scope?, sync} once signed",
    "in; logout {server, signedOut} (as POST /v1/mcp/<server>/logout).",
    "-o ndjson (list, status, sync): one server or report a line. A failed sync still exits 1.",
  ].join("\n"),
  outputs: ["json", "ndjson"],
  args: { min: 1 },
  flags: {
    paste: "bool",
    device: "bool",
    url: "value",
    header: "list",
    env: "list",
    allow: "value",
    scope: "value",
    "client-id": "value",
    "client-secret": "value",
    force: "bool",
  },
  flagHelp: {
    paste: "mcp login on a machine without a browser: paste the URL the browser was sent back to",
    device:
      "mcp login on a machine without a browser: show a code to enter on any device, where the server offers it (RFC 8628)",
    url: "mcp add: the server's Streamable HTTP endpoint",
    header: "mcp add: a header sent with every request, 'Name: value' (repeatable)",
    env: "mcp add: a variable of a command server, NAME=value (repeatable)",
    allow: "mcp add: only these upstream tools, comma-separated",
    scope: "mcp add: the OAuth scopes to ask for at sign-in",
    "client-id": "mcp add: a client id registered beforehand with the server's authorization server",
    "client-secret": "mcp add: its secret",
    force: "mcp add: replace an existing entry",
  },
  async run({ positionals: [action, server, ...names], flags }, ctx) {
    const { tools, stdout, stderr, output = "text" } = ctx;
    if (output === "ndjson" && !(action === "list" || action === "status" || action === "sync"))
      throw usage(`-o ndjson is for mcp list, status and sync; mcp ${action} takes -o json`);
    if (action === "add") {
      if (server === undefined) throw usage("mcp add takes a server name");
      return mcpAdd(server, names, flags, ctx);
    }
    if (action === "status") return mcpStatus(server, ctx);
    if (action !== "accept" && names.length) throw usage(`mcp ${action} takes at most one server name`);
    if (action === "login" || action === "logout") {
      if (server === undefined) throw usage(`mcp ${action} takes a server name`);
      if (action === "logout") return mcpLogout(server, ctx);
      if (flags.paste === true && flags.device === true)
        throw usage("mcp login takes --device or --paste, not both");
      return mcpLogin(
        server,
        flags.device === true ? "device" : flags.paste === true ? "paste" : "loopback",
        ctx,
      );
    }
    if (action === "list") {
      if (server !== undefined) throw usage(`mcp list takes no server name`);
      const servers = await (await tools()).mcpList();
      if (output === "json") {
        await writeJson(stdout, { servers });
        return 0;
      }
      for (const s of servers) {
        if (output === "ndjson") {
          await writeJson(stdout, s);
          continue;
        }
        const target = s.transport ? `${s.transport} ${s.target ?? ""}` : "-";
        const error = s.error ? `\t${s.error.split("\n")[0]}` : "";
        await writeLine(stdout, `${s.server}\t${s.state}\t${s.tools} tools\t${target}${error}`);
      }
      return 0;
    }
    if (action === "sync") {
      const client = await tools();
      const reports = await client.mcpSync(server);
      let code = 0;
      if (output === "json") await writeJson(stdout, { reports });
      for (const r of reports) {
        if (!r.ok) {
          code = 1;
          stderr.write(`${r.server}: ${r.error ?? "the sync failed"}\n`);
        }
        if (output === "ndjson") await writeJson(stdout, r);
        if (!r.ok || output !== "text") continue;
        const changes = [
          ...r.added.map((n) => `+${n}`),
          ...r.changed.map((n) => `~${n}`),
          ...r.removed.map((n) => `-${n}`),
        ];
        const conflicts = r.conflicts.length
          ? `\tnot synced (a tool of that name is not this server's): ${r.conflicts.join(" ")}`
          : "";
        const held = r.held?.length
          ? `\theld for review (kvspace mcp review ${r.server}): ${r.held.join(" ")}`
          : "";
        await writeLine(
          stdout,
          `${r.server}\tsynced\t${r.tools} tools\t${changes.length ? changes.join(" ") : "no change"}${conflicts}${held}`,
        );
      }
      if (reports.length === 0 && server === undefined)
        await writeLine(
          output === "text" ? stdout : stderr,
          "no MCP server is registered under /byteseek/mcp/",
        );
      return code;
    }
    if (action === "review") {
      if (server === undefined) throw usage("mcp review takes a server name");
      const review = await (await tools()).mcpReview(server);
      if (output === "json") {
        await writeJson(stdout, review);
        return 0;
      }
      // pins of tools gone upstream were dropped: said, so a person knows a return is held
      for (const g of review.gone ?? [])
        await writeLine(
          stdout,
          [g.name, "gone upstream", `pin ${shortHash(g.accepted)} dropped (held for review if it comes back)`]
            .map((c) => printable(c))
            .join("\t"),
        );
      if (review.held.length === 0) {
        await writeLine(stdout, `${server}\tnothing held for review`);
        return 0;
      }
      for (const h of review.held) {
        const accepted = h.accepted ? `accepted ${shortHash(h.accepted)}` : "never accepted";
        await writeLine(
          stdout,
          [h.name, h.why, shortHash(h.hash), accepted, h.fields.join(",") || "-"]
            .map((c) => printable(c))
            .join("\t"),
        );
        if (h.diff) stdout.write(printable(h.diff, { lines: true }));
      }
      await writeLine(
        stdout,
        `accept with: kvspace mcp accept ${server} ${review.held.map((h) => h.name).join(" ")}`,
      );
      return 0;
    }
    if (action === "accept") {
      if (server === undefined) throw usage("mcp accept takes a server name");
      const done = await (await tools()).mcpAccept(server, names.length ? { tools: names } : {});
      if (output === "json") {
        await writeJson(stdout, done);
        return 0;
      }
      for (const name of done.accepted) await writeLine(stdout, `${printable(name)}\taccepted`);
      if (done.accepted.length === 0) await writeLine(stdout, `${server}\tnothing held for review`);
      for (const name of done.held) await writeLine(stdout, `${printable(name)}\tstill held`);
      return 0;
    }
    throw usage(`unknown mcp action ${JSON.stringify(action)}`);
  },
});

function usage(message: string): CliError {
  return new CliError("CLI_USAGE", `${message}\nusage: kvspace ${USAGE}`);
}
