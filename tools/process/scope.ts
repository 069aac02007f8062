import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { endCallProcesses } from "./contain.js";
import { buildCommandEnv } from "./env.js";

/** What one call's processes get, and how they are ended: handed to tools as `ctx.commands`. */
export interface CommandScope {
  /** The call's mark: every process it starts carries `BYTESEEK_CALL=<mark>`. */
  readonly mark: string;
  /** Bytes of a command's output kept on disk (the last ones). */
  readonly outputCapBytes: number;
  /** The environment for a command: allow-list, policy passEnv, `declared`, TMPDIR of the call's own, the mark. */
  env(declared?: Readonly<Record<string, string>>): Promise<Record<string, string>>;
  /** A folder of the call's own (made on first use); removed once the call's record is written. */
  scratch(): Promise<string>;
  /** Ends every process the call started (group and marked ones); safe to call more than once. */
  endProcesses(pgid?: number): Promise<number>;
}

/** The runtime's side of a scope: ends what is left and removes the call's folder. */
export interface OwnedScope extends CommandScope {
  dispose(): Promise<void>;
}

export interface ScratchRoot {
  path(): Promise<string>;
  remove(): Promise<void>;
}

/**
 * The folder the server keeps command output and call temp folders in: private (0700) to the
 * server, made on first use, removed whole when the runtime closes.
 */
export function createScratchRoot(parent: string = tmpdir()): ScratchRoot {
  let made: Promise<string> | undefined;
  return {
    path(): Promise<string> {
      made ??= mkdtemp(path.join(parent, "byteseek-calls-"));
      return made;
    },
    async remove(): Promise<void> {
      if (!made) return;
      const dir = await made.catch(() => undefined);
      made = undefined;
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface ScopeOptions {
  source: Readonly<Record<string, string | undefined>>;
  passEnv: readonly string[];
  outputCapBytes: number;
  root: ScratchRoot;
}

export function createCommandScope(options: ScopeOptions): OwnedScope {
  // Drawn when a process or folder needs it: most calls start none.
  let drawn: string | undefined;
  const mark = (): string => {
    drawn ??= randomBytes(12).toString("hex");
    return drawn;
  };
  let dir: Promise<string> | undefined;
  let used = false;
  // the tool ended its processes itself once its command was over: no second scan is needed
  let ended = false;
  function scratch(): Promise<string> {
    used = true;
    dir ??= options.root.path().then(async function makeCallDir(root) {
      const d = path.join(root, mark());
      await mkdir(path.join(d, "tmp"), { recursive: true, mode: 0o700 });
      return d;
    });
    return dir;
  }
  return {
    get mark() {
      return mark();
    },
    outputCapBytes: options.outputCapBytes,
    scratch,
    async env(declared) {
      const d = await scratch();
      return buildCommandEnv({
        source: options.source,
        passEnv: options.passEnv,
        ...(declared ? { declared } : {}),
        mark: mark(),
        tmpdir: path.join(d, "tmp"),
      });
    },
    async endProcesses(pgid) {
      const n = await endCallProcesses(pgid, mark());
      ended = true;
      return n;
    },
    async dispose() {
      if (!used) return;
      if (!ended) await endCallProcesses(undefined, mark());
      const d = await dir?.catch(() => undefined);
      if (d) await rm(d, { recursive: true, force: true });
    },
  };
}
