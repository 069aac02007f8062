/**
 * The view (view.ts) a run's grant gives its commands: the workspace roots writable with `write`,
 * read-only with `read` alone, absent with neither; hidden over them the policy's denied paths, its
 * credential paths (`~/` is the server's HOME) and the server's own folders.
 */
import path from "node:path";
import type { Grant } from "../gate/powers.js";
import type { ViewSpec } from "./view.js";

export interface GrantViewOptions {
  grant: Pick<Grant, "read" | "write">;
  /** Real paths: the runtime's workspace and the policy's workspaceRoots. */
  roots: readonly string[];
  /** Real paths the policy denies. */
  deny: readonly string[];
  /** The policy's credential paths, `~/` for the server's HOME. */
  credentialPaths: readonly string[];
  /** The server's folders (the store, its call output): never shown. */
  serverPaths: readonly string[];
  /** The server's HOME, for `~/` (without one, `~/` paths are skipped). */
  home: string | undefined;
}

/** Expands `~` and `~/x` with `home`; answers undefined for a path that needs one and has none. */
export function expandHome(p: string, home: string | undefined): string | undefined {
  if (p === "~" || p.startsWith("~/")) return home ? path.join(home, p.slice(1)) : undefined;
  return path.resolve(p);
}

export function grantView(options: GrantViewOptions): ViewSpec {
  const { grant } = options;
  const roots = grant.write || grant.read ? options.roots.map((p) => ({ path: p, write: grant.write })) : [];
  const credentials = options.credentialPaths
    .map((p) => expandHome(p, options.home))
    .filter((p): p is string => p !== undefined);
  return { roots, hidden: [...options.deny, ...credentials, ...options.serverPaths] };
}
