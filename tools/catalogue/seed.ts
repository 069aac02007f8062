import type { Logger } from "pino";
import { dirs, keys } from "../../shared/keys.js";
import { isTreeError } from "../../tree/errors.js";
import type { Tree } from "../../tree/types.js";
import { docs } from "../doc/docs.js";
import { parseDoc, writeDoc } from "../doc/read-write.js";
import { isDocError } from "../errors.js";
import { defaultPolicy, LEGACY_DEFAULT_POLICY } from "../gate/policy.js";
import type { BuiltinTool } from "../types.js";
import { parseDeclaration } from "./declaration.js";
import { hashOf } from "./hash.js";

/** Where the seeder remembers what it shipped: one hidden entry per tool. */
export const SHIPPED_DIR = dirs.shipped;

export interface SeedReport {
  /** Written for the first time. */
  written: string[];
  /** Replaced by a newer shipped version (the entry was as shipped before). */
  updated: string[];
  /** Left alone: changed or deleted by a user or an agent. */
  kept: string[];
  /** Already as shipped. */
  unchanged: string[];
  /** Whether the default policy was written (it was absent). */
  policyWritten: boolean;
  /** Whether a stored policy equal to the one shipped before grants was replaced by today's default. */
  policyMigrated: boolean;
}

/**
 * Writes the shipped declarations at first start and on upgrade. For each tool the hash of what
 * was shipped is kept at `/byteseek/tools/‥shipped/<name>`; an entry whose hash still matches
 * that marker is untouched by anyone and may be updated, anything else is someone's change and is
 * kept — a deleted entry stays deleted. Writes the default policy (read-only) when it is absent,
 * and replaces one equal to the policy shipped before grants (nobody changed it) with it.
 */
export async function seedTools(options: {
  tree: Tree;
  builtins: readonly BuiltinTool[];
  logger?: Logger;
}): Promise<SeedReport> {
  const { tree, builtins, logger } = options;
  const report: SeedReport = {
    written: [],
    updated: [],
    kept: [],
    unchanged: [],
    policyWritten: false,
    policyMigrated: false,
  };
  for (const builtin of builtins) {
    const decl = builtin.declaration;
    const key = keys.tool(decl.name);
    const markerKey = keys.shipped(decl.name);
    const shippedHash = hashOf(decl);
    const [node, marker] = await Promise.all([tree.get(key), tree.get(markerKey)]);
    const markerHash = shippedMark(markerKey, marker, logger);
    const currentHash = node && node.kind === "json" ? hashOf(node.value.value) : undefined;
    const writeMarker = () => writeDoc(tree, docs.shipped, markerKey, { hash: shippedHash });

    if (!node) {
      if (markerHash !== undefined) {
        report.kept.push(decl.name); // deleted on purpose
        continue;
      }
      try {
        checkShipped(decl);
        await writeDoc(tree, docs.tool, key, decl, { create: true });
      } catch (err) {
        if (!isTreeError(err, "TREE_EXISTS")) throw err;
        report.kept.push(decl.name); // written meanwhile by someone else
        continue;
      }
      await writeMarker();
      report.written.push(decl.name);
      continue;
    }
    if (currentHash === shippedHash) {
      if (markerHash !== shippedHash) await writeMarker();
      report.unchanged.push(decl.name);
      continue;
    }
    const untouched = markerHash !== undefined && currentHash === markerHash && node.vid === undefined;
    if (!untouched) {
      report.kept.push(decl.name);
      continue;
    }
    try {
      checkShipped(decl);
      await writeDoc(tree, docs.tool, key, decl, { ifVersion: node.version });
    } catch (err) {
      if (!isTreeError(err, "TREE_VERSION_MISMATCH") && !isTreeError(err, "TREE_READ_ONLY")) throw err;
      report.kept.push(decl.name);
      continue;
    }
    await writeMarker();
    report.updated.push(decl.name);
  }

  try {
    await writeDoc(tree, docs.policy, keys.policy, defaultPolicy(), { create: true, ro: true });
    report.policyWritten = true;
  } catch (err) {
    if (!isTreeError(err, "TREE_EXISTS")) throw err;
    report.policyMigrated = await migratePolicy(tree);
  }
  logger?.info(
    { written: report.written.length, updated: report.updated.length, kept: report.kept },
    "tool declarations seeded",
  );
  return report;
}

/**
 * Throws when a shipped declaration does not parse: a bug in byteseek, which fails loudly at the
 * start that would write it. Checked at its write only: the check compiles its parameters' schema,
 * and every start compiling every shipped one (~150 ms of CPU) only to find each stored as it was
 * was most of what a store's open costs `kvspace`, `byteseek mcp` and every other start.
 */
function checkShipped(decl: BuiltinTool["declaration"]): void {
  const checked = parseDeclaration(decl);
  if (!checked.ok)
    throw new Error(`the shipped declaration of ${decl.name} is invalid: ${checked.problems.join("; ")}`);
}

/**
 * The hash a shipped marker holds; undefined when there is none, and for a marker that does not
 * read as one (logged): the seeder then keeps the declaration as someone's change, as it does for
 * any declaration it cannot vouch for — a damaged marker never stops byteseek from starting.
 */
function shippedMark(
  key: string,
  node: Awaited<ReturnType<Tree["get"]>>,
  logger: Logger | undefined,
): string | undefined {
  try {
    return parseDoc(docs.shipped, key, node)?.hash;
  } catch (err) {
    if (!isDocError(err)) throw err;
    logger?.warn({ err, key }, "a shipped marker does not read; its declaration is kept as it is");
    return undefined;
  }
}

/** Replaces a stored policy that is exactly the legacy shipped default, unless someone wrote it meanwhile. */
async function migratePolicy(tree: Tree): Promise<boolean> {
  const node = await tree.get(keys.policy);
  if (node?.kind !== "json" || hashOf(node.value.value) !== hashOf(LEGACY_DEFAULT_POLICY)) return false;
  try {
    await writeDoc(tree, docs.policy, keys.policy, defaultPolicy(), {
      ifVersion: node.version,
      ro: true,
      force: true,
    });
    return true;
  } catch (err) {
    if (!isTreeError(err, "TREE_VERSION_MISMATCH")) throw err;
    return false;
  }
}

export { hashOf };
