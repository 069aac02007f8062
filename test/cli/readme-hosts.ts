/**
 * The MCP host configurations README.md's MCP section prints — Claude Code's `claude mcp add`
 * lines, Codex's TOML, Cursor's and VS Code's JSON — read as those hosts read them, so a test can
 * start what they start (readme.test.ts). Nothing here knows the values: the commands, variables,
 * URLs and headers are the README's own; only its placeholders are filled in (`fill`).
 */

/** One way a host reaches byteseek, as the README prints it. */
export type HostConfig =
  | { host: string; transport: "stdio"; command: string; args: string[]; env: Record<string, string> }
  | { host: string; transport: "http"; url: string; headers: Record<string, string> };

/** The README's hosts, in the order it names them. */
export const HOSTS = ["Claude Code", "Codex", "Cursor", "VS Code"] as const;

/** The indented block of the MCP section holding the host configurations, without its indent. */
function hostBlock(readme: string): string[] {
  const section = readme.slice(readme.indexOf("\n## MCP\n"));
  const lines = section.split("\n");
  const start = lines.findIndex((l) => /^ {4}# Claude Code/.test(l));
  if (start < 0) throw new Error("README.md's MCP section has no indented '# Claude Code' block");
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (line !== "" && !line.startsWith("    ")) break;
    block.push(line.slice(4));
  }
  return block;
}

/** The block's lines per host, by the comment line naming it (`# Claude Code`, `// Cursor (…)`). */
function byHost(block: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of block) {
    const named = /^(?:#|\/\/) (Claude Code|Codex|Cursor|VS Code)\b/.exec(line);
    if (named) {
      current = [];
      groups.set(named[1] as string, current);
    } else if (line.trim() !== "") current?.push(line);
  }
  return groups;
}

/** A shell line's words, as sh splits them: double quotes kept together ($… left for `fill`). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"((?:[^"\\]|\\.|\$\([^)]*\))*)"|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string);
}

/** `claude mcp add [--transport http] <name> <url|-e K=V… -- command args…> [--header "K: V"]`. */
function claudeConfigs(lines: readonly string[]): HostConfig[] {
  return lines.map((line) => {
    const words = shellWords(line);
    if (words.slice(0, 3).join(" ") !== "claude mcp add") throw new Error(`not a claude line: ${line}`);
    const rest = words.slice(3);
    if (rest[0] === "--transport") {
      const url = rest.find((w) => /^https?:/.test(w)) ?? "";
      return { host: "Claude Code", transport: "http" as const, url, headers: headersOf(rest) };
    }
    const env: Record<string, string> = {};
    const dash = rest.indexOf("--");
    for (let i = 0; i < dash; i++)
      if (rest[i] === "-e") {
        const [k, ...v] = (rest[++i] as string).split("=");
        env[k as string] = v.join("=");
      }
    const [command, ...args] = rest.slice(dash + 1);
    return { host: "Claude Code", transport: "stdio" as const, command: command as string, args, env };
  });
}

function headersOf(words: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < words.length; i++)
    if (words[i] === "--header") {
      const text = words[i + 1] as string;
      const at = text.indexOf(":");
      headers[text.slice(0, at).trim()] = text.slice(at + 1).trim();
    }
  return headers;
}

/** Codex's `[mcp_servers.byteseek]` table: command, args and env; the comment's `url` and `bearer_token_env_var`. */
function codexConfigs(lines: readonly string[]): HostConfig[] {
  const strings = (text: string) =>
    Object.fromEntries([...text.matchAll(/(\w+)\s*=\s*"([^"]*)"/g)].map((m) => [m[1], m[2]])) as Record<
      string,
      string
    >;
  const value = (key: string) => lines.find((l) => l.startsWith(`${key} = `))?.slice(key.length + 3);
  const env = value("env");
  const stdio: HostConfig = {
    host: "Codex",
    transport: "stdio",
    command: JSON.parse(value("command") ?? "null") as string,
    args: JSON.parse(value("args") ?? "null") as string[],
    env: env ? strings(env) : {},
  };
  const comment = lines.find((l) => /^# or over HTTP:/.test(l)) ?? "";
  const http = strings(comment);
  const bearer = http.bearer_token_env_var;
  return [
    stdio,
    {
      host: "Codex",
      transport: "http",
      url: http.url ?? "",
      // Codex sends the variable's value as a bearer token
      headers: bearer ? { Authorization: `Bearer $\{env:${bearer}}` } : {},
    },
  ];
}

/** Cursor's and VS Code's JSON: each configuration one document (VS Code's second spans two lines). */
function jsonConfigs(host: string, lines: readonly string[]): HostConfig[] {
  const docs: Array<Record<string, Record<string, Record<string, unknown>>>> = [];
  let pending = "";
  for (const line of lines) {
    pending += line;
    try {
      docs.push(JSON.parse(pending));
      pending = "";
    } catch {
      // not whole yet
    }
  }
  if (pending !== "") throw new Error(`${host}: a configuration that is not JSON: ${pending}`);
  return docs.map((doc) => {
    const entry = (doc.mcpServers ?? doc.servers)?.byteseek;
    if (!entry) throw new Error(`${host}: no byteseek server in ${JSON.stringify(doc)}`);
    if (typeof entry.url === "string")
      return {
        host,
        transport: "http" as const,
        url: entry.url,
        headers: (entry.headers ?? {}) as Record<string, string>,
      };
    return {
      host,
      transport: "stdio" as const,
      command: entry.command as string,
      args: entry.args as string[],
      env: (entry.env ?? {}) as Record<string, string>,
    };
  });
}

/** Every host configuration README.md prints, per host: a stdio one first, then an HTTP one. */
export function readmeHostConfigs(readme: string): HostConfig[] {
  const groups = byHost(hostBlock(readme));
  const of = (host: string) => groups.get(host) ?? [];
  return [
    ...claudeConfigs(of("Claude Code")),
    ...codexConfigs(of("Codex")),
    ...jsonConfigs("Cursor", of("Cursor")),
    ...jsonConfigs("VS Code", of("VS Code")),
  ];
}

/** What a person puts in the README's placeholders. */
export interface Filling {
  /** The project folder: `$PWD`, `${workspaceFolder}`, `/abs/path`. */
  project: string;
  /** The server's token: `$(cat $PWD/data/token)`, `${env:BYTESEEK_TOKEN}`, `${input:…}`, `…`. */
  token: string;
  /** Where the server listens instead of the README's 127.0.0.1:7411 (a test may not take that port). */
  hostPort: string;
}

/** A value of the README with its placeholders filled, as the host (or its shell) would. */
export function fill(text: string, f: Filling): string {
  return text
    .replace(/\$\(cat [^)]*\/token\)/g, f.token)
    .replace(/\$\{env:BYTESEEK_TOKEN\}|\$\{input:byteseek-token\}/g, f.token)
    .replace(/^…$/, f.token)
    .replaceAll("$PWD", f.project)
    .replace(/\$\{workspaceFolder\}/g, f.project)
    .replaceAll("/abs/path", f.project)
    .replaceAll("127.0.0.1:7411", f.hostPort);
}

/** Every string of a record filled. */
export function fillAll(values: Record<string, string>, f: Filling): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, fill(v, f)]));
}
