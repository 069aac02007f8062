import type { Logger } from "pino";
import { readStoreToken } from "../server/token-file.js";
import { isTreeError } from "../tree/errors.js";
import { sharePath, socketAt } from "../tree/held-socket.js";
import { describeStore, openTree, resolveStore, type StoreSpec } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import { CliError } from "./errors.js";

/**
 * Opens a `Tree` on a byteseek server's URL, or through a Unix socket (`socketPath`); comes with
 * the HTTP client (tree/http).
 */
export type RemoteTreeFactory = (
  url: URL,
  env: NodeJS.ProcessEnv,
  options?: { socketPath?: string; watchPatienceMs?: number },
) => Promise<Tree>;

export interface OpenStoreOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logger?: Logger;
  /** How to reach a server when `KVSPACE` is an `http(s)://` URL; absent: such a URL is refused. */
  remote?: RemoteTreeFactory;
}

/** The store `KVSPACE` and the store settings name (TREE_INVALID_OPTION when one is malformed or misplaced). */
export function storeSpec(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): StoreSpec {
  return resolveStore(env, cwd);
}

/**
 * Opens the store `KVSPACE` names: the embedded classic-level store in a folder, a tree on etcd,
 * or a server through `remote`; writes of tool declarations, the policy and MCP server entries are
 * checked (tools/catalogue/checked-tree.ts; a server checks them itself). A folder another process holds
 * is reached through that process's socket when `remote` is given and it answers there (a
 * `byteseek mcp` or `byteseek serve`); otherwise it fails with `CLI_STORE_LOCKED` saying how to
 * go through the server instead.
 */
export async function openStore(options: OpenStoreOptions = {}): Promise<Tree> {
  const { env = process.env, cwd = process.cwd(), logger, remote } = options;
  const spec = storeSpec(env, cwd);
  if (spec.backend === "http") {
    if (remote === undefined)
      throw new CliError(
        "CLI_STORE_UNSUPPORTED",
        `KVSPACE=${spec.url}: reaching a byteseek server over HTTP is not supported here; set KVSPACE to a store folder or etcd://…`,
      );
    return remote(new URL(spec.url), env);
  }
  const location = describeStore(spec);
  try {
    const tree = await openTree({ ...spec, ...(logger ? { logger } : {}) });
    // a server checks what it is sent; here the CLI writes the store itself, so it checks (loaded
    // here: storeSpec's callers that only read KVSPACE, and a server's URL, need none of it)
    const [{ builtinMap }, { createCheckedTree }] = await Promise.all([
      import("../compose/byteseek.js"),
      import("../tools/catalogue/checked-tree.js"),
    ]);
    return createCheckedTree(tree, { builtins: () => builtinMap() });
  } catch (err) {
    const through =
      isLockedError(err) && remote && spec.backend === "classic"
        ? await throughHolder(spec.location, env, remote)
        : undefined;
    if (through) return through;
    // No address is guessed here: a hint never points at a server nobody found.
    if (isLockedError(err))
      throw new CliError(
        "CLI_STORE_LOCKED",
        `the store at ${location} is in use by another process that serves no byteseek socket beside it\n` +
          "(another kvspace command: try again in a moment; a program other than byteseek, or an older byteseek: stop it, or reach the store through the server that holds it, KVSPACE=http://<its host:port>)",
        { cause: err },
      );
    if (isTreeError(err)) throw err;
    throw new CliError("CLI_STORE_UNAVAILABLE", `cannot open the store at ${location}: ${describe(err)}`, {
      cause: err,
    });
  }
}

/**
 * The tree of a folder another process holds, through the HTTP API it serves on its share socket
 * (a `byteseek mcp` or `byteseek serve`: tree/held-socket.ts), with its token (BYTESEEK_TOKEN, or the one
 * kept in the store folder: server/token-file.ts) and its checks; undefined
 * when nothing answers there (a holder that is not byteseek, or one that left).
 */
async function throughHolder(
  folder: string,
  env: NodeJS.ProcessEnv,
  remote: RemoteTreeFactory,
): Promise<Tree | undefined> {
  let socketPath: string;
  try {
    socketPath = await sharePath(folder, env);
  } catch {
    return undefined;
  }
  // The token goes only to a socket this user made.
  if ((await socketAt(socketPath)) !== "own") return undefined;
  // The holder's credential: BYTESEEK_TOKEN, or the store's token file (beside the folder's data).
  let token: string | undefined;
  try {
    token = env.BYTESEEK_TOKEN || (await readStoreToken(folder));
  } catch (err) {
    throw new CliError("CLI_STORE_UNAVAILABLE", (err as Error).message, { cause: err });
  }
  try {
    return await remote(
      new URL("http://localhost"),
      token === undefined ? env : { ...env, BYTESEEK_TOKEN: token },
      { socketPath },
    );
  } catch (err) {
    // Anything else (a wrong token, say) is the holder's answer, and says what to do.
    if (isTreeError(err) && err.code === "TREE_UNAVAILABLE") return undefined;
    throw err;
  }
}

/** LevelDB's lock: classic-level says LEVEL_DATABASE_NOT_OPEN caused by LEVEL_LOCKED; the tree may say TREE_LOCKED. */
export function isLockedError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === "LEVEL_LOCKED" || code === "TREE_LOCKED") return true;
  }
  return false;
}

/** The innermost useful message of an open failure. */
function describe(err: unknown): string {
  let e = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
