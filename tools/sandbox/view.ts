/**
 * The filesystem a sandboxed command sees, from its run's grant: the system folders read-only
 * (their secrets hidden), the workspace roots writable with `write` or read-only with `read` only,
 * and hidden over them the policy's denied paths, the credential paths and the server's own
 * folders. Everything else — $HOME, the store, /run, /var, other users' files — is simply absent.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import type { MountStep } from "./argv.js";

/** Folders programs need, bound read-only (a symlink, as /bin on merged-/usr systems, stays one). */
export const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"] as const;

/**
 * Secrets under /etc: a sandboxed command runs as uid 0 inside, mapped to the server's user (root in
 * containers and CI), so file modes do not protect them.
 */
export const SYSTEM_SECRETS = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/ssh",
  "/etc/sudoers",
  "/etc/sudoers.d",
  "/etc/ssl/private",
  "/etc/security/opasswd",
] as const;

export interface ViewSpec {
  /** Workspace roots (real paths) and whether the command may change them. */
  roots: ReadonlyArray<{ path: string; write: boolean }>;
  /** Paths hidden even inside a bound root: denied paths, credentials, the server's folders. */
  hidden: readonly string[];
  /** Extra folders bound read-only: the Node.js install when it lies outside the system folders. */
  extraReadOnly?: readonly string[];
}

/** Is `p` `root` or inside it? */
export function within(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** The mounts of a view, in the order bubblewrap must apply them. */
export async function resolveView(spec: ViewSpec): Promise<MountStep[]> {
  const steps: MountStep[] = [];
  const visible: string[] = [];
  for (const dir of SYSTEM_PATHS) {
    const st = await lstat(dir).catch(() => undefined);
    if (!st) continue;
    if (st.isSymbolicLink()) steps.push({ op: "symlink", target: await readlink(dir), dest: dir });
    else if (st.isDirectory()) {
      steps.push({ op: "ro-bind", src: dir, dest: dir });
      visible.push(dir);
    }
  }
  for (const dir of spec.extraReadOnly ?? []) {
    if (visible.some((v) => within(dir, v))) continue;
    steps.push({ op: "ro-bind", src: dir, dest: dir });
    visible.push(dir);
  }
  // parents before the roots nested in them, so a nested root's own mode wins inside it
  const roots = [...spec.roots].sort((a, b) => a.path.length - b.path.length);
  for (const root of roots) {
    steps.push({ op: root.write ? "bind" : "ro-bind", src: root.path, dest: root.path });
    visible.push(root.path);
  }
  const hidden = new Set<string>(SYSTEM_SECRETS);
  for (const p of spec.hidden) {
    hidden.add(path.resolve(p));
    // a hidden path reached through a symlink is hidden where it really is too
    const real = await realpath(p).catch(() => undefined);
    if (real) hidden.add(real);
  }
  const hiddenDirs: string[] = [];
  for (const p of [...hidden].sort((a, b) => a.length - b.length)) {
    if (!visible.some((v) => within(p, v))) continue;
    if (hiddenDirs.some((h) => within(p, h))) continue; // already gone with its folder
    const st = await lstat(p).catch(() => undefined);
    if (!st || st.isSymbolicLink()) continue; // nothing there (or a link: its target is handled)
    if (st.isDirectory()) {
      steps.push({ op: "hide-dir", dest: p });
      hiddenDirs.push(p);
    } else steps.push({ op: "hide-file", dest: p });
  }
  return steps;
}
