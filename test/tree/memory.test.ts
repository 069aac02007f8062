import { openTree } from "../../tree/index.js";
import { describeTreeSuite } from "./conformance.js";

describeTreeSuite("memory-level", async (options = {}) => {
  const tree = await openTree({ backend: "memory", ...options });
  return {
    tree,
    async dispose() {
      // A test may have closed it already; closing twice is pinned by the suite itself.
      await tree.close().catch(() => {});
    },
  };
});
