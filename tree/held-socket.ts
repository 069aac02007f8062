/**
 * A held store folder's socket: where it sits and what its first line says. LevelDB lets one
 * process hold a folder, so the process that holds one (`byteseek serve`, `byteseek mcp`, an
 * embedded `byteseek run|chat`) listens on a Unix socket beside it (tree/held-listen.ts), and a
 * second process that finds the folder locked uses the store through it: `kvspace` and
 * `byteseek run|chat` speak the HTTP API there (cli/open-store.ts), a `byteseek mcp` relays its
 * client's MCP session there (cli/mcp-relay.ts, served by mcp/share.ts).
 *
 * Who may connect: the socket is made with mode 0600 (only this user, who can open the store's
 * files anyway), in the store folder or, when that path is too long for a socket, in a private
 * folder of this user's (0700, checked); and a client talks to a holder only through a socket this
 * user made (`socketAt`).
 *
 * A relay's first line is `{"byteseek":"relay","version":2,"workspace":…,"token"?:…}`; the holder
 * answers `{"byteseek":"ok","holder":"serve"|"mcp"|"run","workspace":…}` or
 * `{"byteseek":"refused","code":…,"message":…}`, then the relayed protocol flows. A connection
 * whose first byte starts an HTTP request line (a method's capital letter; a hello starts with `{`)
 * is HTTP.
 */
import { createHash } from "node:crypto";
import { lstat, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

/** The socket's name in the store folder. */
export const SHARE_SOCKET = "mcp.sock";

/**
 * How long a `byteseek serve` that stopped is given to come back (a restart) before a relay takes
 * its folder over (cli/mcp-relay.ts).
 */
export const HOLDER_RESTART_GRACE_MS = 5000;

/**
 * How long a `kvspace` watch through a held folder waits for a holder after losing one (the
 * grace above and a relay's takeover after it) before it ends, saying how to go on.
 */
export const HELD_WATCH_PATIENCE_MS = HOLDER_RESTART_GRACE_MS + 1000;

/** A Unix socket path holds at most 107 bytes on Linux (104 on macOS); keep below both. */
const MAX_SOCKET_PATH = 100;

/** What holds a folder: a relay that loses a server leaves it time to restart before taking over. */
export const Holder = z.enum(["serve", "mcp", "run"]);
export type Holder = z.infer<typeof Holder>;

export const RelayHello = z
  .object({
    byteseek: z.literal("relay"),
    version: z.literal(2),
    workspace: z.string().min(1).max(4096),
    /** The holder's credential. */
    token: z.string().max(4096).optional(),
  })
  .strict();
export type RelayHello = z.infer<typeof RelayHello>;

/**
 * The holder's answer to a hello. An older holder's `vid` (it once named the relayed session's
 * run) is dropped: the session's run is made at its initialize (mcp/session-run.ts).
 */
export const HolderAnswer = z.union([
  z.object({
    byteseek: z.literal("ok"),
    holder: Holder.optional(),
    /** Where the holder's file tools work (every relayed call runs there). */
    workspace: z.string().optional(),
  }),
  z.object({ byteseek: z.literal("refused"), code: z.string(), message: z.string() }),
]);
export type HolderAnswer = z.infer<typeof HolderAnswer>;

/** Where the holder of `folder` (an absolute store path) listens. */
export async function sharePath(folder: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const beside = join(folder, SHARE_SOCKET);
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH) return beside;
  const dir = await privateDir(env);
  const name = createHash("sha256").update(folder).digest("hex").slice(0, 32);
  return join(dir, `${name}.sock`);
}

/**
 * What is at a holder's socket path: nothing, a socket this user made, or something else (a
 * symlink, a file, another user's socket). A client talks to a holder only through its own: a
 * socket someone else put in a shared store folder never gets a relay's session or a token.
 */
export async function socketAt(path: string): Promise<"absent" | "own" | "foreign"> {
  const st = await lstat(path).catch(() => undefined);
  if (st === undefined) return "absent";
  const uid = process.getuid?.();
  return st.isSocket() && (uid === undefined || st.uid === uid) ? "own" : "foreign";
}

/** `$XDG_RUNTIME_DIR/byteseek`, or `<tmp>/byteseek-<uid>`: made 0700, and refused when anyone else could use it. */
async function privateDir(env: NodeJS.ProcessEnv): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  const base = env.XDG_RUNTIME_DIR || tmpdir();
  const dir = join(base, env.XDG_RUNTIME_DIR ? "byteseek" : `byteseek-${uid}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0)
    throw new Error(
      `${dir} is not a private folder of this user's (a folder, owned by uid ${uid}, mode 0700): remove it, or set XDG_RUNTIME_DIR to one that is`,
    );
  return dir;
}
