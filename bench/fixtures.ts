/** What several bench scripts set up alike: the no-op built-in, and a seeded byteseek on a fresh store. */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Logger, pino } from "pino";
import { type Byteseek, createByteseek } from "../compose/byteseek.js";
import type { BuiltinTool } from "../tools/types.js";
import { openTree } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import type { TreeValue } from "../tree/value.js";

/** A built-in that does nothing: a call's cost is then the boundary's own. */
export const noopTool: BuiltinTool = {
  ref: "bench.noop",
  declaration: {
    name: "bench.noop",
    description: "does nothing",
    snippet: "bench.noop(n?) — does nothing",
    params: { type: "object", properties: { n: { type: "integer" } }, additionalProperties: false },
    sequential: false,
    impl: { kind: "builtin", ref: "bench.noop" },
  },
  execute: async () => ({ text: "ok" }),
};

/** What `withByteseek` hands its body: the raw store, byteseek over it, its workspace. */
export interface BenchByteseek {
  tree: Tree;
  bs: Byteseek;
  logger: Logger;
  workspace: string;
}

/** Runs `body` on byteseek over a fresh classic-level store in a temp folder (`prefix`), removed after. */
export async function withByteseek<T>(prefix: string, body: (b: BenchByteseek) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const logger = pino({ level: "silent" });
  const tree = await openTree({ backend: "classic", location: join(dir, "db") });
  try {
    const workspace = join(dir, "ws");
    await mkdir(workspace);
    const bs = await createByteseek({ tree, workspace, logger, env: {} });
    return await body({ tree, bs, logger, workspace });
  } finally {
    await tree.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Whether a value written is a call's `started` record. */
export function isStartedRecord(value: TreeValue): boolean {
  return value.kind === "json" && (value.value as { state?: string } | null)?.state === "started";
}

/**
 * The tree, with every write of a call's `started` record (an append holding state "started")
 * made through `around`: timed by the durability bench, held or failed by the intent tests.
 */
export function aroundStarts(
  tree: Tree,
  around: (append: () => ReturnType<Tree["append"]>) => ReturnType<Tree["append"]>,
): Tree {
  return new Proxy(tree, {
    get(target, prop, receiver) {
      if (prop !== "append") return Reflect.get(target, prop, receiver);
      return (...args: Parameters<Tree["append"]>) =>
        isStartedRecord(args[1]) ? around(() => target.append(...args)) : target.append(...args);
    },
  });
}
