import { openTree } from "../../tree/index.js";
import { describeTreeSuite } from "./conformance.js";
import { tempDir } from "./temp-dir.js";

describeTreeSuite("classic-level", async (options = {}) => {
  const dir = await tempDir();
  const tree = await openTree({ backend: "classic", location: dir.path, ...options });
  return {
    tree,
    async dispose() {
      // A test may have closed it already; closing twice is pinned by the suite itself.
      await tree.close().catch(() => {});
      await dir.remove();
    },
  };
});
