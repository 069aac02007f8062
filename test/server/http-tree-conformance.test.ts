import pino from "pino";
import { afterAll } from "vitest";
import { type App, buildApp } from "../../server/app.js";
import { createHttpTree } from "../../tree/http/index.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { describeTreeSuite } from "../tree/conformance.js";

/**
 * The tree's own conformance suite, run through `createHttpTree` against a live server on a fresh
 * memory tree per test: the HTTP tree must behave exactly as the embedded one.
 *
 * The client sends through the transport of the lane this run is on (tree/http/transport.ts):
 * node:http on the fast lane, undici with BYTESEEK_FAST=0 (vitest.config.ts runs this file both ways).
 *
 * Building and listening an app costs more than most of these tests, so idle apps are kept and
 * reused: each serves, through `current`, the fresh tree of the test that holds it (a test may
 * hold several at once).
 */
interface Served {
  app: App;
  url: string;
  current: { tree: Tree | undefined };
}

const idle: Served[] = [];
const all: Served[] = [];

/** A tree that forwards every call to whichever tree `holder` holds now. */
function forwarding(holder: { tree: Tree | undefined }): Tree {
  return new Proxy({} as Tree, {
    get(_target, prop) {
      const tree = holder.tree;
      if (!tree) throw new Error("no tree is being served");
      const v = Reflect.get(tree, prop, tree) as unknown;
      return typeof v === "function" ? v.bind(tree) : v;
    },
  });
}

async function serve(): Promise<Served> {
  const reused = idle.pop();
  if (reused) return reused;
  const current: Served["current"] = { tree: undefined };
  const app = await buildApp({
    tree: forwarding(current),
    logger: pino({ level: "silent" }),
    web: false,
    watchProgressMs: 200,
  });
  const served = { app, url: await app.listen({ host: "127.0.0.1", port: 0 }), current };
  all.push(served);
  return served;
}

afterAll(async () => {
  for (const s of all) await s.app.close();
});

describeTreeSuite("http (createHttpTree → live server)", async (options = {}) => {
  const inner = await openTree({ backend: "memory", ...options });
  const served = await serve();
  served.current.tree = inner;
  const tree = createHttpTree({ url: served.url });
  await tree.refresh();
  return {
    tree,
    async dispose() {
      await tree.close().catch(() => {});
      await inner.close();
      served.current.tree = undefined;
      idle.push(served);
    },
  };
});
