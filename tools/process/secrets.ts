import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";

/**
 * Variables named like credentials: the server keeps them to itself. Any name holding AUTH, PASS,
 * CRED, TOKEN, KEY or SECRET (`GITHUB_AUTH`, `NPM_CONFIG__AUTH`, `PGPASSWORD`, `AWS_ACCESS_KEY_ID`,
 * `BYTESEEK_LLM_KEY`), or ending in `_PAT`.
 */
export const SECRET_NAME = /AUTH|PASS|CRED|TOKEN|KEY|SECRET|_PAT$/i;

/** A URL carrying a user (and often a password) before its host: `postgres://u:pw@h/db`. */
const URL_WITH_USERINFO = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]*@/;

/** A withdrawn value this long or longer is looked for in the other variables too. */
const MIN_SECRET_LENGTH = 8;

/**
 * The names of `env` that hold a secret: by name (`SECRET_NAME`, plus `names`), by value (a URL with
 * userinfo, wherever it sits: `DATABASE_URL=postgres://u:pw@h/db`), and any variable whose value
 * is one of those secrets' values (a copy under an innocent name).
 */
export function secretNames(
  env: Readonly<Record<string, string | undefined>>,
  names: readonly string[] = [],
): string[] {
  const extra = new Set(names);
  const found = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (extra.has(name) || SECRET_NAME.test(name) || URL_WITH_USERINFO.test(value.trim())) found.add(name);
  }
  const values = [...found]
    .map((n) => env[n])
    .filter((v): v is string => v !== undefined && v.length >= MIN_SECRET_LENGTH);
  if (values.length > 0)
    for (const [name, value] of Object.entries(env))
      if (value !== undefined && !found.has(name) && values.includes(value)) found.add(name);
  return [...found];
}

/**
 * An environment less BYTESEEK_TOKEN: what a process's runtime takes its commands' variables from.
 * The token guards the HTTP API (or is this process's credential to a server or a held folder's
 * socket); no tool sees it, not even through the policy's passEnv.
 */
export function withoutToken(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  const { BYTESEEK_TOKEN: _token, ...rest } = env;
  return rest;
}

export interface WithdrawnEnv {
  /** The whole environment as it was, secrets included: hand it to the parts that read settings. */
  env: Record<string, string | undefined>;
  /** The names taken out of the process's environment. */
  withdrawn: string[];
}

/**
 * Takes the server's secrets out of its own process, once, at start: `BYTESEEK_TOKEN`,
 * `BYTESEEK_LLM_KEY`, provider keys, anything else named like a credential, URLs with userinfo and
 * copies of those values (`secretNames`, plus `names`) are deleted from `process.env`, and their bytes are wiped from the block the kernel
 * shows as `/proc/<pid>/environ` (the process's own memory, written through `/proc/self/mem`), so a
 * command that reads its parent's environ finds none of them. Answers a copy of the environment
 * taken before, for the configuration to read. Where `/proc` is missing, only `process.env` is cleaned.
 */
export function withdrawSecrets(names: readonly string[] = []): WithdrawnEnv {
  const env: Record<string, string | undefined> = { ...process.env };
  const withdrawn = secretNames(env, names);
  for (const name of withdrawn) delete process.env[name];
  if (withdrawn.length > 0) wipeInitialEnviron(withdrawn);
  return { env, withdrawn };
}

/** Zeroes `NAME=value` for each name in the initial environment block (fields 50-51 of /proc/self/stat). */
function wipeInitialEnviron(names: readonly string[]): void {
  let fd: number | undefined;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // fields after the command name, which is in parentheses and may hold spaces; field 3 comes first
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) return;
    fd = openSync("/proc/self/mem", "r+");
    const block = Buffer.alloc(end - start);
    readSync(fd, block, 0, block.length, start);
    for (let at = 0; at < block.length; ) {
      let stop = block.indexOf(0, at);
      if (stop === -1) stop = block.length;
      const entry = block.toString("utf8", at, stop);
      const eq = entry.indexOf("=");
      if (eq > 0 && names.includes(entry.slice(0, eq)))
        writeSync(fd, Buffer.alloc(stop - at), 0, stop - at, start + at);
      at = stop + 1;
    }
  } catch {
    // no /proc (not Linux) or no access to our own memory: process.env is clean all the same
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
