/**
 * The store's token: `<store>/token`, made at a holder's first start (`byteseek serve`, or a
 * `byteseek mcp` holding the folder) when `BYTESEEK_TOKEN` names none, and read by the clients on
 * the same machine that reach the holder (`kvspace`, `byteseek run|chat|mcp`, cli/open-store.ts).
 *
 * Only this user may hold it: the file is made with mode 0600 and O_EXCL under a temporary name,
 * then linked into place (a link never replaces a file another process put there first), and one
 * that is a symlink, is not a regular file, belongs to another user or is readable by anyone else
 * is refused, never read or rewritten: someone who could plant or read it could take the server.
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { link, lstat, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ServerError } from "./server-error.js";

/** The token's file name in the store folder. */
export const TOKEN_FILE = "token";

/** A token byteseek makes: 32 random bytes, base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What a token looks like (made here or put there by a person): printable, no spaces, at most 4096 characters. */
const TOKEN_TEXT = /^[\x21-\x7e]{1,4096}$/;

/** The token file's path in a store folder. */
export function tokenPath(folder: string): string {
  return join(folder, TOKEN_FILE);
}

/**
 * The token of the store at `folder`: read from `<folder>/token`, or made there when there is none
 * (call only while holding the store, so two holders cannot both make one). Throws SERVER_CONFIG
 * saying what to do when the file is there but may not be trusted.
 */
export async function ensureStoreToken(
  folder: string,
): Promise<{ token: string; path: string; made: boolean }> {
  const path = tokenPath(folder);
  const found = await readStoreToken(folder);
  if (found !== undefined) return { token: found, path, made: false };
  const token = newToken();
  const temp = join(folder, `.token-${randomBytes(8).toString("hex")}`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(
      temp,
      fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW,
      0o600,
    );
    await handle.writeFile(`${token}\n`);
    await handle.sync();
    await handle.close();
    handle = undefined;
    try {
      await link(temp, path);
    } catch (err) {
      // another process made one between our look and our link: theirs stands
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const theirs = await readStoreToken(folder);
      if (theirs === undefined) throw err;
      return { token: theirs, path, made: false };
    }
    return { token, path, made: true };
  } catch (err) {
    if (err instanceof ServerError) throw err;
    throw new ServerError(
      "SERVER_CONFIG",
      `cannot make the token file ${path}: ${(err as Error).message}. Make the store folder writable by this user, or set BYTESEEK_TOKEN`,
      {},
      err,
    );
  } finally {
    await handle?.close().catch(() => {});
    await unlink(temp).catch(() => {});
  }
}

/**
 * The token kept at `<folder>/token`, or undefined when there is none. Throws SERVER_CONFIG when the
 * file may not be trusted (a symlink, not a regular file, another user's, readable by others, or not
 * a token), naming what to do.
 */
export async function readStoreToken(folder: string): Promise<string | undefined> {
  const path = tokenPath(folder);
  const seen = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT" || err.code === "ENOTDIR") return undefined;
    throw untrusted(path, err.message);
  });
  if (seen === undefined) return undefined;
  if (seen.isSymbolicLink()) throw untrusted(path, "it is a symlink");
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: a symlink swapped in after the look is not followed either
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (err) {
    throw untrusted(path, (err as Error).message);
  }
  try {
    // checked on the file as opened, not the path
    const st = await handle.stat();
    if (!st.isFile()) throw untrusted(path, "it is not a regular file");
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid)
      throw untrusted(path, `it belongs to uid ${st.uid}, not to this user (${uid})`);
    if ((st.mode & 0o077) !== 0)
      throw untrusted(
        path,
        `its mode is ${(st.mode & 0o777).toString(8)}: others may read it (chmod 600 it if no one did)`,
      );
    if (st.size > 4200) throw untrusted(path, "it is too large to be a token");
    const text = (await handle.readFile("utf8")).trim();
    if (!TOKEN_TEXT.test(text)) throw untrusted(path, "it does not hold a token");
    return text;
  } finally {
    await handle.close();
  }
}

function untrusted(path: string, why: string): ServerError {
  return new ServerError(
    "SERVER_CONFIG",
    `the token file ${path} is not used: ${why}. Remove it (a new one is made at the next start of byteseek serve), or set BYTESEEK_TOKEN`,
    { path },
  );
}
