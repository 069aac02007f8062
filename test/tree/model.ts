import { compareNames, parentOf } from "../../tree/path.js";
import type { TreeValue } from "../../tree/value.js";

/** One child as the model lists it. */
export interface ModelChild {
  name: string;
  kind: string;
  value?: TreeValue;
  count?: number;
}

/**
 * The simplest tree that could work: a map of values and a set of directories. The property tests
 * run the same operations on it and on a real tree and compare what they answer.
 */
export class TreeModel {
  readonly values = new Map<string, { value: TreeValue; version: number }>();
  readonly dirs = new Set<string>(["/"]);

  set(key: string, value: TreeValue): number {
    this.mkdirs(parentOf(key) ?? "/");
    const version = (this.values.get(key)?.version ?? 0) + 1;
    this.values.set(key, { value, version });
    return version;
  }

  del(key: string): boolean {
    return this.values.delete(key);
  }

  deltree(dir: string): number {
    if (!this.dirs.has(dir)) return 0;
    let removed = 0;
    for (const key of [...this.values.keys()])
      if (key.startsWith(dir)) {
        this.values.delete(key);
        removed++;
      }
    for (const d of [...this.dirs])
      if (d.startsWith(dir)) {
        this.dirs.delete(d);
        removed++;
      }
    return removed;
  }

  mkindex(dir: string): void {
    this.mkdirs(dir);
  }

  /** Appends into a directory only appends write to, so its next number is its child count. */
  append(dir: string, value: TreeValue): string {
    const key = `${dir}${this.children(dir)?.length ?? 0}`;
    this.set(key, value);
    return key;
  }

  /** The direct children in natural order (value before a directory of the same name), or undefined. */
  children(dir: string): ModelChild[] | undefined {
    if (!this.dirs.has(dir)) return undefined;
    const out: Array<ModelChild & { bare: string; isDir: boolean }> = [];
    for (const [key, v] of this.values)
      if (parentOf(key) === dir) {
        const bare = key.slice(dir.length);
        out.push({ name: bare, bare, isDir: false, kind: v.value.kind, value: v.value });
      }
    for (const d of this.dirs)
      if (d !== "/" && parentOf(d) === dir) {
        const bare = d.slice(dir.length, -1);
        out.push({
          name: `${bare}/`,
          bare,
          isDir: true,
          kind: "index",
          count: this.children(d)?.length ?? 0,
        });
      }
    out.sort((a, b) => compareNames(a.bare, b.bare) || Number(a.isDir) - Number(b.isDir));
    return out.map(({ bare: _bare, isDir: _isDir, ...child }) => child);
  }

  private mkdirs(dir: string): void {
    for (let d: string | undefined = dir; d !== undefined && !this.dirs.has(d); d = parentOf(d))
      this.dirs.add(d);
  }
}
