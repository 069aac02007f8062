import pino from "pino";
import { createHttpTree } from "../../cli/http-tree.js";
import { buildApp } from "../../server/app.js";
import { openTree } from "../../tree/index.js";
import { describeTreeSuite } from "../tree/conformance.js";

/**
 * The tree's own conformance suite, run through `createHttpTree` against a live server on a fresh
 * memory tree per test: the HTTP tree must behave exactly as the embedded one.
 */
describeTreeSuite("http (createHttpTree → live server)", async (options = {}) => {
  const inner = await openTree({ backend: "memory", ...options });
  const app = await buildApp({
    tree: inner,
    logger: pino({ level: "silent" }),
    web: false,
    watchProgressMs: 200,
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const tree = createHttpTree({ url });
  await (tree as typeof tree & { refresh(): Promise<void> }).refresh();
  return {
    tree,
    async dispose() {
      await tree.close().catch(() => {});
      await app.close();
      await inner.close();
    },
  };
});
