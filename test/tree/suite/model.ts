import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TreeError } from "../../../tree/errors.js";
import type { ListChild, Tree } from "../../../tree/types.js";
import {
  bool,
  float64,
  INT64_MAX,
  INT64_MIN,
  int64,
  json,
  str,
  type TreeValue,
} from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { listAll } from "../helpers.js";
import { type ModelChild, TreeModel } from "../model.js";

type Op =
  | { op: "set"; key: string; value: TreeValue }
  | { op: "del"; key: string }
  | { op: "deltree"; dir: string }
  | { op: "mkindex"; dir: string }
  | { op: "append"; dir: string; value: TreeValue }
  | { op: "list"; dir: string };

// A small alphabet so operations collide; "q" is left to append's directories.
const name = fc.constantFrom("a", "b", "1", "2", "10", "‥s");
const valueKey = fc.array(name, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join("/")}`);
const dirKey = fc.array(name, { minLength: 1, maxLength: 2 }).map((s) => `/${s.join("/")}/`);
const appendDir = fc.constantFrom("/q/", "/a/q/");
const value: fc.Arbitrary<TreeValue> = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map(int64),
  // -0 is left to the values suite, which pins it on its own.
  fc
    .double()
    .filter((d) => !Object.is(d, -0))
    .map(float64),
  fc.boolean().map(bool),
  fc
    .string({ maxLength: 8 })
    .filter((s) => s.isWellFormed())
    .map(str),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 3 }).map(json),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant("set" as const), key: valueKey, value }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("del" as const), key: valueKey }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("deltree" as const), dir: dirKey }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("mkindex" as const), dir: dirKey }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("append" as const), dir: appendDir, value }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("list" as const),
      dir: fc.oneof(dirKey, appendDir, fc.constant("/")),
    }),
  },
);

/**
 * What a real listing says, in the model's terms. Where a value and a directory share a name, the
 * value is put first here whatever the tree answered: the list suite pins that tie-break on its own,
 * so that this property keeps checking everything else when the tie-break is wrong.
 */
function simplify(children: ListChild[]): ModelChild[] {
  const ordered = [...children];
  for (let i = 0; i + 1 < ordered.length; i++) {
    const [a, b] = [ordered[i], ordered[i + 1]];
    if (a !== undefined && b !== undefined && a.name === `${b.name}/`) [ordered[i], ordered[i + 1]] = [b, a];
  }
  return ordered.map((c) =>
    c.kind === "index"
      ? { name: c.name, kind: c.kind, count: c.count }
      : { name: c.name, kind: c.kind, ...(c.value === undefined ? {} : { value: c.value }) },
  );
}

async function listOrAbsent(tree: Tree, dir: string): Promise<ModelChild[] | undefined> {
  try {
    return simplify(await listAll(tree, dir, { system: true }));
  } catch (err) {
    if (err instanceof TreeError && err.code === "TREE_NOT_FOUND") return undefined;
    throw err;
  }
}

async function step(tree: Tree, model: TreeModel, o: Op): Promise<void> {
  const before = tree.revision();
  switch (o.op) {
    case "set": {
      const res = await tree.set(o.key, o.value);
      expect(res.version).toBe(model.set(o.key, o.value));
      expect(res.rev).toBe(before + 1);
      return;
    }
    case "del": {
      const res = await tree.del(o.key);
      const deleted = model.del(o.key);
      expect(res.deleted).toBe(deleted);
      expect(tree.revision()).toBe(deleted ? before + 1 : before);
      return;
    }
    case "deltree": {
      const res = await tree.deltree(o.dir);
      expect(res.removed).toBe(model.deltree(o.dir));
      return;
    }
    case "mkindex":
      await tree.mkindex(o.dir);
      model.mkindex(o.dir);
      return;
    case "append": {
      const res = await tree.append(o.dir, o.value);
      expect(res.key).toBe(model.append(o.dir, o.value));
      expect(res.rev).toBe(before + 1);
      return;
    }
    case "list": {
      const expected = model.children(o.dir);
      const got = await listOrAbsent(tree, o.dir);
      // An absent directory may also be answered as an empty listing here; the list suite pins which.
      if (expected === undefined && got !== undefined) expect(got).toEqual([]);
      else expect(got).toEqual(expected);
      return;
    }
  }
}

/** Compares every directory and value of the model with the tree, from the root down. */
async function compareAll(tree: Tree, model: TreeModel): Promise<void> {
  for (const dir of model.dirs) expect(await listOrAbsent(tree, dir), dir).toEqual(model.children(dir));
  for (const [key, v] of model.values) expect(await tree.get(key), key).toMatchObject({ value: v.value });
  const seen = new Set<string>();
  const walk = async (dir: string) => {
    seen.add(dir);
    for (const child of await listAll(tree, dir, { system: true }))
      if (child.kind === "index") await walk(`${dir}${child.name}`);
      else seen.add(`${dir}${child.name}`);
  };
  await walk("/");
  expect([...seen].sort()).toEqual([...model.dirs, ...model.values.keys()].sort());
}

export function modelSuite(ctx: SuiteContext): void {
  describe("against a model", () => {
    it("agrees with a simple in-memory model over random operation sequences", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
          await ctx.withTree({}, async (tree) => {
            const model = new TreeModel();
            for (const o of ops) await step(tree, model, o);
            await compareAll(tree, model);
          });
        }),
        { numRuns: 100 },
      );
      // 100 fresh trees and ~8,000 calls: over HTTP with the reference lanes (fastify answering
      // every call) that is 5-20 s on a busy machine, too close to the default 30 s.
    }, 90_000);
  });
}
