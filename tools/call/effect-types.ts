/**
 * What a call will do, as an approval shows it (effect.ts makes it). Types only, importing
 * nothing, so the web page's tsconfig reaches it through agent/events.ts.
 */
export interface Effect {
  kind: "builtin" | "shell" | "http" | "llm" | "mcp";
  /** One line a person reads: the command line, `POST https://…`, `MCP server x, tool y`… */
  text: string;
  /** `shell`: the program and arguments as they will be passed (never through a shell). */
  argv?: string[];
  /** `http` */
  method?: string;
  url?: string;
  /** `mcp` */
  server?: string;
  tool?: string;
  /** `llm`: the prompt's key */
  prompt?: string;
  /** `builtin` */
  ref?: string;
  /** `shell.run`: the command line it hands to the shell. */
  command?: string;
}
