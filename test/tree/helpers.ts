import { expect } from "vitest";
import { TreeError, type TreeErrorCode } from "../../tree/errors.js";
import type { HistoryLimit } from "../../tree/history-limit.js";
import type { ListChild, Tree, TreeNode, ValueNode, WatchBatch } from "../../tree/types.js";

/** Options the conformance suite passes to a backend's factory (the backend adds its own). */
export interface SuiteTreeOptions {
  historyLimit?: HistoryLimit;
  retainRevisions?: number;
  maxValueBytes?: number;
}

/** A tree opened for one test, and how to get rid of it (close it, remove its files). */
export interface OpenedTree {
  tree: Tree;
  dispose(): Promise<void>;
}

/** How a backend opens a fresh, empty tree. */
export type MakeTree = (options?: SuiteTreeOptions) => Promise<OpenedTree>;

/** Runs `action` and asserts it fails with a TreeError of `code`; answers the error. */
export async function expectTreeError(action: () => unknown, code: TreeErrorCode): Promise<TreeError> {
  let outcome: unknown;
  try {
    outcome = await action();
  } catch (err) {
    expect(err, `expected a TreeError ${code}, got ${String(err)}`).toBeInstanceOf(TreeError);
    const treeErr = err as TreeError;
    expect(treeErr.code, treeErr.message).toBe(code);
    expect(treeErr.message.length).toBeGreaterThan(0);
    return treeErr;
  }
  throw new Error(`expected a TreeError ${code}, but it succeeded with ${show(outcome)}`);
}

/** Runs `action` and asserts it fails with a TreeError of one of `codes`. */
export async function expectTreeErrorOneOf(
  action: () => unknown,
  codes: TreeErrorCode[],
): Promise<TreeError> {
  try {
    await action();
  } catch (err) {
    expect(err).toBeInstanceOf(TreeError);
    expect(codes).toContain((err as TreeError).code);
    return err as TreeError;
  }
  throw new Error(`expected a TreeError ${codes.join(" or ")}, but it succeeded`);
}

/** Runs `action` and asserts it fails with a TreeError (any code): bad input never escapes as a raw error. */
export async function expectAnyTreeError(action: () => unknown): Promise<TreeError> {
  try {
    await action();
  } catch (err) {
    expect(err, `expected a TreeError, got ${String(err)}`).toBeInstanceOf(TreeError);
    return err as TreeError;
  }
  throw new Error("expected a TreeError, but it succeeded");
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x));
  } catch {
    return String(v);
  }
}

/** The node at `key`, asserting it is a value. */
export async function getValue(tree: Tree, key: string): Promise<ValueNode> {
  const node = await tree.get(key);
  expect(node, `${key} should exist`).toBeDefined();
  expect(node?.kind, `${key} should be a value`).not.toBe("index");
  return node as ValueNode;
}

/** The node at `key`, asserting it is a directory. */
export async function getDir(tree: Tree, key: string): Promise<TreeNode & { kind: "index"; count: number }> {
  const node = await tree.get(key);
  expect(node, `${key} should exist`).toBeDefined();
  expect(node?.kind, `${key} should be a directory`).toBe("index");
  return node as TreeNode & { kind: "index"; count: number };
}

/** Every child of `dir`, following pagination. */
export async function listAll(
  tree: Tree,
  dir: string,
  options: { system?: boolean; limit?: number } = {},
): Promise<ListChild[]> {
  const out: ListChild[] = [];
  let after: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const res = await tree.list(dir, { ...options, ...(after === undefined ? {} : { after }) });
    out.push(...res.children);
    if (res.next === undefined) return out;
    after = res.next;
  }
  throw new Error(`listing ${dir} did not end`);
}

/** Names of the children of `dir`, in the order listed. */
export async function names(tree: Tree, dir: string, options: { system?: boolean } = {}): Promise<string[]> {
  return (await listAll(tree, dir, options)).map((c) => c.name);
}

/** The first `n` batches of a watch; leaving the loop ends the watch. */
export async function take(iterable: AsyncIterable<WatchBatch>, n: number): Promise<WatchBatch[]> {
  const out: WatchBatch[] = [];
  if (n <= 0) return out;
  for await (const batch of iterable) {
    out.push(batch);
    if (out.length >= n) break;
  }
  return out;
}

/** Resolves after pending I/O callbacks have run; used to let a watcher reach its wait. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
