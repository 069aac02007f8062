/**
 * What a call will actually do, as a person approving it must see it: not `text.wc
 * {"path":"notes.md"}` but `wc -w notes.md`. Resolved from the declaration and the arguments the
 * way the impl kinds run them: a `shell` impl's argv with its placeholders filled, an `http` impl's
 * method and URL, an `mcp` impl's upstream server and tool, an `llm` impl's prompt, a built-in's ref
 * (and `shell.run`'s command). Every approval entry carries it, and every display shows `text`
 * through `printable` (printable.ts).
 */
import type { ToolDeclaration } from "../catalogue/declaration.js";
import { httpUrl } from "../impl/http.js";
import { fillPlaceholders } from "../impl/placeholders.js";
import type { Effect } from "./effect-types.js";

export type { Effect } from "./effect-types.js";

/** A word of a command line as a person would type it: quoted only when it must be. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The effect of calling `decl` with `args` (which passed its schema). */
export function effectOf(decl: ToolDeclaration, args: Record<string, unknown>): Effect {
  const impl = decl.impl;
  switch (impl.kind) {
    case "shell": {
      const argv = impl.argv
        .map((a) => fillPlaceholders(a, args))
        .filter((a): a is string => a !== undefined);
      const cwd = impl.cwd ? ` (in ${fillPlaceholders(impl.cwd, args) ?? "."})` : "";
      return { kind: "shell", argv, text: `${argv.map(shellWord).join(" ")}${cwd}` };
    }
    case "http": {
      let url: string;
      try {
        url = httpUrl(impl, args).href;
      } catch {
        url = impl.url;
      }
      return { kind: "http", method: impl.method, url, text: `${impl.method} ${url}` };
    }
    case "mcp":
      return {
        kind: "mcp",
        server: impl.server,
        tool: impl.tool,
        text: `MCP server "${impl.server}", tool "${impl.tool}"`,
      };
    case "llm":
      return { kind: "llm", prompt: impl.prompt, text: `the model, with the prompt ${impl.prompt}` };
    case "builtin": {
      const command = impl.ref === "shell.run" && typeof args.command === "string" ? args.command : undefined;
      return {
        kind: "builtin",
        ref: impl.ref,
        ...(command !== undefined ? { command } : {}),
        text: command !== undefined ? `built-in shell.run: ${command}` : `built-in ${impl.ref}`,
      };
    }
  }
}
