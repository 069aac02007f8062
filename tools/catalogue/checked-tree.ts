/**
 * The tree with its writes checked: a tool declaration (`/byteseek/tools/<name>`), the policy
 * (`/byteseek/policy`) or an upstream MCP server's entry (`/byteseek/mcp/<server>`) that does not
 * validate against its schema is refused with the problems, and nothing is written — instead of
 * being stored and then failing every call ("the policy is invalid") or leaving a tool out of the
 * list. A write that says `unchecked` stores it anyway (`kvspace set|import --unchecked`, HTTP
 * `?unchecked=1`, a txn op's `"unchecked": true`); `kvspace tools --check` then reports it.
 *
 * A write without a run id under /byteseek/ (a person's: HTTP, the CLI, the web page, an approved
 * change) makes the key the person's: its owner run is cleared (tools/gate/ownership.ts says why).
 *
 * The refusal is the tree's own `TREE_INVALID_VALUE` (400 over HTTP), carrying `details.check`
 * (what the value was checked as) and `details.problems` (one line each: the field's path and
 * what is expected): a checked tree is a `Tree`, and its callers — the HTTP client, which rebuilds
 * the tree's errors from a server's answer; the tree tools, which map them for the model; the
 * CLI — already handle that error.
 */

import { TreeError } from "../../tree/errors.js";
import { isSystemName } from "../../tree/path.js";
import type { ExportEntry, ImportOptions, Tree, TxnRequest } from "../../tree/types.js";
import { type Json, type TreeValue, valueFromJson, valueToJson } from "../../tree/value.js";
import { personOwnable } from "../gate/ownership.js";
import { POLICY_KEY, Policy } from "../gate/policy.js";
import { MCP_DIR, parseEntry, serverOfKey } from "../mcp/registry.js";
import type { BuiltinTool } from "../types.js";
import { TOOLS_DIR } from "./catalogue.js";
import { parseDeclaration, zodProblems } from "./declaration.js";

/** What a checked key holds. */
export type CheckedValue = "declaration" | "policy" | "mcp-server";

const LABEL: Record<CheckedValue, string> = {
  declaration: "tool declaration",
  policy: "policy",
  "mcp-server": "MCP server entry",
};

/** Where a person reads what each value holds. */
const DOC: Record<CheckedValue, string> = {
  declaration: "docs/TOOLS.md lists every field",
  policy: "docs/TOOLS.md lists every field",
  "mcp-server": "README.md lists every field",
};

/** How a person stores a refused value anyway, on every surface. */
export const UNCHECKED_HINT =
  "store it anyway with --unchecked (kvspace set|import; HTTP ?unchecked=1); kvspace tools --check then reports it";

export interface CheckOptions {
  /**
   * The built-in functions a `builtin` impl may name; absent: any `ref` passes. A function is
   * called once, on the first declaration checked (building the tools costs more than most
   * commands that open a store and never write one).
   */
  builtins?: ReadonlyMap<string, BuiltinTool> | (() => ReadonlyMap<string, BuiltinTool>);
}

/** A directory of checked values names each by what it is; an append would name one with a number. */
function refuseAppend(dir: string): void {
  if (dir === TOOLS_DIR || dir === MCP_DIR)
    throw new TreeError(
      "TREE_INVALID_VALUE",
      `${dir} holds values named by what they are (${dir === TOOLS_DIR ? "a tool's family.verb" : "a server's name"}), and an append names its value with a number: write ${dir}<name> instead`,
      { key: dir, check: dir === TOOLS_DIR ? "declaration" : "mcp-server" },
    );
}

/** A value the check refused: where, as what, and why (one line per problem). */
export interface Refusal {
  key: string;
  what: CheckedValue;
  problems: string[];
}

/** What `key` is checked as, or undefined when writes to it are not checked. */
export function checkedAt(key: string): CheckedValue | undefined {
  if (key === POLICY_KEY) return "policy";
  if (key.startsWith(TOOLS_DIR)) {
    const name = key.slice(TOOLS_DIR.length);
    // `‥shipped/…` and other system entries are byteseek's bookkeeping, never a declaration
    return name !== "" && !name.includes("/") && !isSystemName(name) ? "declaration" : undefined;
  }
  const server = serverOfKey(key);
  return server !== undefined && !isSystemName(server) ? "mcp-server" : undefined;
}

/** Whether keys landing at or below `to` (a value or a directory) may be checked ones. */
function mayHoldChecked(to: string): boolean {
  if (checkedAt(to) !== undefined) return true;
  if (!to.endsWith("/")) return false;
  return [TOOLS_DIR, MCP_DIR, POLICY_KEY].some((k) => k.startsWith(to)) || to.startsWith(MCP_DIR);
}

/** The problems of a value written at `key`, or undefined when it passes (or the key is not checked). */
export function checkValue(
  key: string,
  value: TreeValue,
  builtins?: ReadonlyMap<string, BuiltinTool>,
): Refusal | undefined {
  const what = checkedAt(key);
  if (what === undefined) return undefined;
  if (value.kind !== "json")
    return {
      key,
      what,
      problems: [`a ${LABEL[what]} is a json value, not ${value.kind}: write it as json:{…}`],
    };
  const raw = value.value;
  let problems: string[] = [];
  if (what === "declaration") {
    const name = key.slice(TOOLS_DIR.length);
    const parsed = parseDeclaration(raw, { name, ...(builtins ? { builtins } : {}) });
    if (!parsed.ok) problems = parsed.problems;
  } else if (what === "policy") {
    const parsed = Policy.safeParse(raw);
    if (!parsed.success) problems = zodProblems(parsed.error, Policy);
  } else {
    const parsed = parseEntry(raw);
    if (!parsed.ok) problems = parsed.problems;
  }
  return problems.length > 0 ? { key, what, problems } : undefined;
}

/** The error a refusal is: what was refused, each problem on its line, and how to go on. */
export function refusalError(refusal: Refusal, context: { line?: number; txn?: boolean } = {}): TreeError {
  const { key, what, problems } = refusal;
  const head =
    context.line !== undefined
      ? `import failed at line ${context.line}: ${key} is not a valid ${LABEL[what]}, so nothing was imported:`
      : `${key} is not a valid ${LABEL[what]}, so ${context.txn ? "the transaction did not run" : "it was not written"}:`;
  const message = `${head}\n- ${problems.join("\n- ")}\nFix the value (${DOC[what]}), or ${UNCHECKED_HINT}`;
  return new TreeError("TREE_INVALID_VALUE", message, {
    key,
    check: what,
    problems,
    ...(context.line !== undefined ? { line: context.line } : {}),
  });
}

const CHECKED = new WeakSet<Tree>();

/**
 * `tree` with its writes checked (see the top of this file). Reads, deletes, watches and exports
 * pass through untouched; so does a tree that is already checked.
 */
export function createCheckedTree(tree: Tree, options: CheckOptions = {}): Tree {
  if (CHECKED.has(tree)) return tree;
  let builtins: ReadonlyMap<string, BuiltinTool> | undefined;
  const known = (): ReadonlyMap<string, BuiltinTool> | undefined => {
    if (builtins === undefined && options.builtins !== undefined)
      builtins = typeof options.builtins === "function" ? options.builtins() : options.builtins;
    return builtins;
  };
  const check = (key: string, value: TreeValue) =>
    checkedAt(key) === undefined ? undefined : checkValue(key, value, known());

  /**
   * The values a move or copy would land on checked keys, checked as a set of each would be: read
   * from the source before the write (a change to the source in between is not seen; what lands
   * is then only what `kvspace tools --check` reports, as an unchecked write).
   */
  async function checkLanding(from: string, to: string): Promise<void> {
    if (!mayHoldChecked(to)) return;
    const landing = async (key: string, kind: ExportEntry["kind"], raw: unknown) => {
      const target = to + key.slice(from.length);
      if (kind === "index" || checkedAt(target) === undefined) return;
      const refusal = check(target, valueFromJson(kind, raw as Json));
      if (refusal) throw refusalError(refusal, { txn: true });
    };
    if (!from.endsWith("/")) {
      const node = await tree.get(from);
      if (node && node.kind !== "index") await landing(from, node.kind, valueToJson(node.value));
      return;
    }
    for await (const e of tree.export(from)) await landing(e.key, e.kind, e.value);
  }

  async function checkTxn(request: TxnRequest): Promise<TxnRequest> {
    for (const op of [...(request.success ?? []), ...(request.failure ?? [])]) {
      if (op.op === "append") refuseAppend(op.key);
      if ((op.op === "move" || op.op === "copy") && !op.unchecked) await checkLanding(op.key, op.to);
      if (op.op !== "set" || op.unchecked) continue;
      const refusal = check(op.key, op.value);
      if (refusal) throw refusalError(refusal, { txn: true });
    }
    // A person's write (no run id) under /byteseek/ makes what it writes theirs: a set's key, and
    // every key a move or copy lands.
    const own = (ops: TxnRequest["success"]) =>
      ops?.map((op) =>
        (op.op === "set" || op.op === "move" || op.op === "copy") &&
        op.vid === undefined &&
        personOwnable(op.op === "set" ? op.key : op.to)
          ? { ...op, disown: true }
          : op,
      );
    return {
      ...request,
      ...(request.success ? { success: own(request.success) } : {}),
      ...(request.failure ? { failure: own(request.failure) } : {}),
    };
  }

  /**
   * The entries as the import reads them, each checked as it passes unless `unchecked` (the import
   * writes nothing until all are read), and a line without a run id under /byteseek/ marked to
   * disown its key: a person's import makes what it writes theirs, as their set does.
   */
  async function* checkedEntries(
    entries: AsyncIterable<ExportEntry | string> | Iterable<ExportEntry | string>,
    unchecked: boolean,
  ): AsyncGenerator<ExportEntry | string> {
    let line = 0;
    for await (const raw of entries) {
      line++;
      const parsed = typeof raw === "string" ? parseLine(raw) : raw;
      if (parsed === undefined) {
        yield raw; // the import reports what is wrong with it, naming the line
        continue;
      }
      const { disown: _asked, ...entry } = parsed;
      if (typeof entry.key === "string" && entry.vid === undefined && personOwnable(entry.key))
        (entry as Partial<ExportEntry>).disown = true;
      if (
        !unchecked &&
        typeof entry.key === "string" &&
        entry.kind !== "index" &&
        checkedAt(entry.key) !== undefined
      ) {
        let value: TreeValue | undefined;
        try {
          value = valueFromJson(entry.kind, entry.value);
        } catch {
          value = undefined; // likewise
        }
        const refusal = value && check(entry.key, value);
        if (refusal) throw refusalError(refusal, { line });
      }
      // parsed once: the import checks the rest of the line as it would have checked the text
      yield entry as ExportEntry;
    }
  }

  const checked: Tree = {
    get: (key, o) => tree.get(key, o),
    async set(key, value, o = {}) {
      if (!o.unchecked) {
        const refusal = check(key, value);
        if (refusal) throw refusalError(refusal);
      }
      return tree.set(key, value, o.vid === undefined && personOwnable(key) ? { ...o, disown: true } : o);
    },
    del: (key, o) => tree.del(key, o),
    deltree: (dir, o) => tree.deltree(dir, o),
    mkindex: (dir) => tree.mkindex(dir),
    list: (dir, o) => tree.list(dir, o),
    async append(dir, value, o) {
      refuseAppend(dir);
      return tree.append(dir, value, o);
    },
    async txn(request) {
      return tree.txn(await checkTxn(request));
    },
    watch: (prefix, o) => tree.watch(prefix, o),
    history: (key) => tree.history(key),
    export: (dir) => tree.export(dir),
    import(entries, o: ImportOptions = {}) {
      return tree.import(checkedEntries(entries, o.unchecked === true), o);
    },
    clear: () => tree.clear(),
    revision: () => tree.revision(),
    compactedRev: () => tree.compactedRev(),
    close: () => tree.close(),
  };
  const sync = tree.syncRevision;
  if (sync) checked.syncRevision = () => sync.call(tree);
  if (tree.leases) checked.leases = tree.leases;
  CHECKED.add(checked);
  return checked;
}

/** An import line read as the import reads it, or undefined when it is not a JSON object. */
function parseLine(raw: string): Partial<ExportEntry> | undefined {
  if (raw.trim() === "") return undefined;
  try {
    const e = JSON.parse(raw) as unknown;
    return e !== null && typeof e === "object" && !Array.isArray(e) ? (e as Partial<ExportEntry>) : undefined;
  } catch {
    return undefined;
  }
}
