import type { ToolDeclaration } from "../catalogue/declaration.js";
import { httpUrl } from "../impl/http.js";
import type { Need, Power } from "./powers.js";

/**
 * Every power a call of `decl` with `args` needs. A `builtin` impl needs what the function it
 * names needs (so an alias never needs less than what it wraps); `shell` needs exec, `http` net
 * to its host, `llm` the model and `tree` on its prompt key. An http URL the arguments cannot
 * make is reported by the gate, not here.
 */
export function powersNeeded(
  decl: ToolDeclaration,
  args: Record<string, unknown>,
  builtin: (ref: string) => readonly Power[],
): Need[] {
  const impl = decl.impl;
  switch (impl.kind) {
    case "builtin":
      return builtin(impl.ref).map((power): Need => {
        if (power === "tree") return { power, key: typeof args.key === "string" ? args.key : "/" };
        if (power === "net") throw new Error(`a built-in cannot need net without a URL (${impl.ref})`);
        return { power };
      });
    case "shell":
      return [{ power: "exec" }];
    case "http": {
      try {
        return [{ power: "net", url: httpUrl(impl, args) }];
      } catch {
        return [];
      }
    }
    case "llm":
      return [{ power: "model" }, { power: "tree", key: impl.prompt }];
    case "mcp":
      // what its registered server needs (exec or net) is read from the registry by the gate
      return [];
  }
}
