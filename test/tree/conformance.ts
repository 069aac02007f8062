import { afterEach, describe } from "vitest";
import type { Tree } from "../../tree/types.js";
import type { SuiteContext } from "./context.js";
import type { MakeTree, OpenedTree, SuiteTreeOptions } from "./helpers.js";
import { appendSuite } from "./suite/append.js";
import { deleteSuite } from "./suite/delete.js";
import { exportSuite } from "./suite/export.js";
import { historySuite } from "./suite/history.js";
import { keySuite } from "./suite/keys.js";
import { lifecycleSuite } from "./suite/lifecycle.js";
import { listSuite } from "./suite/list.js";
import { metaSuite } from "./suite/meta.js";
import { modelSuite } from "./suite/model.js";
import { transferSuite } from "./suite/transfer.js";
import { txnSuite } from "./suite/txn.js";
import { valueSuite } from "./suite/values.js";
import { watchSuite } from "./suite/watch.js";

/**
 * The tree's specification as tests (issue 2, section 2), written once and run against every
 * backend: `makeTree` opens a fresh, empty tree of that backend with the options given.
 */
export function describeTreeSuite(name: string, makeTree: MakeTree): void {
  describe(`tree on ${name}`, () => {
    const opened: OpenedTree[] = [];
    afterEach(async () => {
      for (const handle of opened.splice(0)) await handle.dispose();
    });
    const ctx: SuiteContext = {
      async open(options: SuiteTreeOptions = {}): Promise<Tree> {
        const handle = await makeTree(options);
        opened.push(handle);
        return handle.tree;
      },
      async withTree<T>(options: SuiteTreeOptions, fn: (tree: Tree) => Promise<T>): Promise<T> {
        const handle = await makeTree(options);
        try {
          return await fn(handle.tree);
        } finally {
          await handle.dispose();
        }
      },
    };
    lifecycleSuite(ctx);
    keySuite(ctx);
    valueSuite(ctx);
    metaSuite(ctx);
    listSuite(ctx);
    deleteSuite(ctx);
    appendSuite(ctx);
    txnSuite(ctx);
    transferSuite(ctx);
    watchSuite(ctx);
    historySuite(ctx);
    exportSuite(ctx);
    modelSuite(ctx);
  });
}
