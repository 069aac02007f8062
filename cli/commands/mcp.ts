import { defineCommand, writeLine } from "../command.js";
import { CliError } from "../errors.js";

const USAGE = "mcp list | mcp sync [<server>]";

/**
 * `kvspace mcp list`: one line per registered upstream MCP server — name, state, tool count,
 * transport and target, and the last error. `kvspace mcp sync [<server>]`: syncs its tools (or
 * every server's) into declarations now; one line per server saying what changed; exit 1 naming the
 * server when one cannot start or answer (within its timeout).
 */
export const mcpCommand = defineCommand({
  name: "mcp",
  usage: USAGE,
  summary: "list the upstream MCP servers, or sync their tools into declarations",
  args: { min: 1, max: 2 },
  async run({ positionals: [action, server] }, { tools, stdout, stderr }) {
    if (action === "list") {
      if (server !== undefined) throw usage(`mcp list takes no server name`);
      const client = await tools();
      for (const s of await client.mcpList()) {
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
      for (const r of reports) {
        if (!r.ok) {
          code = 1;
          stderr.write(`${r.server}: ${r.error ?? "the sync failed"}\n`);
          continue;
        }
        const changes = [
          ...r.added.map((n) => `+${n}`),
          ...r.changed.map((n) => `~${n}`),
          ...r.removed.map((n) => `-${n}`),
        ];
        const conflicts = r.conflicts.length
          ? `\tnot synced (a tool of that name is not this server's): ${r.conflicts.join(" ")}`
          : "";
        await writeLine(
          stdout,
          `${r.server}\tsynced\t${r.tools} tools\t${changes.length ? changes.join(" ") : "no change"}${conflicts}`,
        );
      }
      if (reports.length === 0 && server === undefined)
        await writeLine(stdout, "no MCP server is registered under /byteseek/mcp/");
      return code;
    }
    throw usage(`unknown mcp action ${JSON.stringify(action)}`);
  },
});

function usage(message: string): CliError {
  return new CliError("CLI_USAGE", `${message}\nusage: kvspace ${USAGE}`);
}
