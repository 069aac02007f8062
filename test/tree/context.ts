import type { Tree } from "../../tree/types.js";
import type { SuiteTreeOptions } from "./helpers.js";

/** What each section of the conformance suite gets from `describeTreeSuite`. */
export interface SuiteContext {
  /** A fresh, empty tree, disposed of after the test. */
  open(options?: SuiteTreeOptions): Promise<Tree>;
  /** A fresh tree for `fn` only, disposed of when it ends (for property runs that open many). */
  withTree<T>(options: SuiteTreeOptions, fn: (tree: Tree) => Promise<T>): Promise<T>;
}
