import { z } from "zod";
import { dirs } from "../../shared/keys.js";
import type { TreeNode } from "../../tree/types.js";
import type { Json, TreeValue } from "../../tree/value.js";
import { inferValue, json, VALUE_KINDS, valueFromJson } from "../../tree/value.js";
import { nodeHash, valueHash } from "../call/intent.js";
import { checkCatalogueRoom } from "../catalogue/agent-tools.js";
import { checkValue } from "../catalogue/checked-tree.js";
import { parseDeclaration } from "../catalogue/declaration.js";
import { defineBuiltin } from "../catalogue/declare.js";
import { ToolError } from "../errors.js";
import { netHosts } from "../gate/gate.js";
import { guardRunWrite } from "../gate/ownership.js";
import { hostAllowed, POLICY_KEY, Policy } from "../gate/policy.js";
import { builtinPowers, grantOf, type Power } from "../gate/powers.js";
import { keepMaskedSecrets, parseEntry, serverOfKey } from "../mcp/registry.js";
import type { BuiltinTool, ToolContext } from "../types.js";
import { fromTreeError, guardKey } from "./common.js";

const TreeSetArgs = z
  .object({
    key: z.string().describe("Absolute key of a value (not ending in '/'), e.g. /byteseek/tools/text.wc"),
    value: z
      .unknown()
      .describe("The value: an object or array is stored as json, a string as text, a number as a number"),
    kind: z
      .enum(VALUE_KINDS)
      .optional()
      .describe("Force a kind (int64, float64, bool, char/utf8, json); default: inferred from the value"),
    ifVersion: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Write only if the key's version is still this (0: only if it does not exist)"),
  })
  .strict();

const TOOLS_DIR = dirs.tools;

/**
 * `tree.set`: writes one value, recording the calling run as its owner — which is how the gate
 * knows a declaration is agent-written. Never the policy, never a read-only key; what a person owns
 * only with their approval (tools/gate/ownership.ts).
 */
export function createTreeSetTool(): BuiltinTool {
  return defineBuiltin({
    name: "tree.set",
    description:
      "Write one value in the byteseek tree. Writing a declaration at /byteseek/tools/<family.verb> adds (or changes) a tool: it can be called right away and appears in the next tool list. Read-only keys and the policy cannot be written.",
    snippet: "write a tree value; declare a tool at /byteseek/tools/<name>",
    guidelines: [
      'To add a tool, tree.set /byteseek/tools/<family.verb> with {name, description, snippet, params (a JSON Schema object), impl}; a shell impl is {"kind": "shell", "argv": ["wc", "-l", "{path}"]} where {param} is replaced by the argument.',
      "Pass ifVersion (from tree.get) when changing an existing key, so you never overwrite someone else's change.",
    ],
    schema: TreeSetArgs,
    sequential: true,
    // the key's version and value now, and the value this call writes: a resumed run reads the key
    async keyIntent(parsed, ctx) {
      let value: TreeValue;
      let current: Awaited<ReturnType<typeof ctx.tree.get>>;
      try {
        guardKey(parsed.key, "write");
        value = writtenValue(parsed);
        current = await ctx.tree.get(parsed.key);
      } catch {
        return []; // refused as it stands: the call writes nothing
      }
      value = withKeptSecrets(parsed.key, value, current);
      return [
        {
          key: parsed.key,
          version: current?.version ?? 0,
          before: nodeHash(current),
          after: valueHash(value),
        },
      ];
    },
    async execute(parsed, ctx) {
      const { key } = parsed;
      guardKey(key, "write");
      let value: TreeValue;
      try {
        value = writtenValue(parsed);
      } catch (err) {
        fromTreeError(err);
      }
      refuseInvalid(key, value);
      if (value.kind === "json" && serverOfKey(key) !== undefined)
        value = withKeptSecrets(key, value, await ctx.tree.get(key).catch(fromTreeError));
      const { asPerson } = await guardRunWrite({
        tree: ctx.tree,
        vid: ctx.vid,
        approved: ctx.approved === true,
        key,
        action: "set",
        next: value,
      }).catch(fromTreeError);
      await guardMcpRegistration(ctx, key, value);
      if (!asPerson) await guardCatalogueRoom(ctx, key, value);
      const res = await ctx.tree
        .set(key, value, {
          ...(asPerson ? {} : { vid: ctx.vid }),
          ...(parsed.ifVersion !== undefined ? { ifVersion: parsed.ifVersion } : {}),
        })
        .catch(fromTreeError);
      let note = "";
      if (key.startsWith(TOOLS_DIR) && !key.slice(TOOLS_DIR.length).includes("/"))
        note = await declarationNote(key.slice(TOOLS_DIR.length), value, ctx);
      return {
        text: `Set ${key} (${value.kind}, version ${res.version}).${note}`,
        details: { key, kind: value.kind, version: res.version, rev: res.rev },
      };
    },
  });
}

/** The value a call writes, as its arguments state it (throws the tree's error for a bad one). */
function writtenValue(parsed: z.output<typeof TreeSetArgs>): TreeValue {
  return parsed.kind ? valueFromJson(parsed.kind, parsed.value) : inferValue(parsed.value as Json);
}

/** An MCP server entry keeps the secrets the stored one has where the new one shows them masked. */
function withKeptSecrets(key: string, value: TreeValue, current: TreeNode | undefined): TreeValue {
  if (value.kind !== "json" || serverOfKey(key) === undefined) return value;
  return json(
    keepMaskedSecrets(key, value.value, current?.kind === "json" ? current.value.value : undefined),
  );
}

/**
 * A declaration, policy or MCP server entry that does not validate is never written (the checked
 * tree would refuse it too): the model learns what to fix before a person is asked to approve it.
 */
function refuseInvalid(key: string, value: TreeValue): void {
  const refusal = checkValue(key, value);
  if (!refusal) return;
  const what = refusal.what === "declaration" ? "tool declaration" : "MCP server entry";
  throw new ToolError(
    "invalid_args",
    `Not written: this is not a valid ${what}:\n- ${refusal.problems.join("\n- ")}\nFix the value and call tree.set again.`,
    { kind: "arg", details: { key, check: refusal.what, problems: refusal.problems } },
  );
}

/**
 * An agent registers an upstream MCP server only with the powers starting it takes: `exec` for a
 * command, `net` to the URL's host (the sync would start it at once, before any call is gated).
 */
async function guardMcpRegistration(ctx: ToolContext, key: string, value: TreeValue): Promise<void> {
  if (serverOfKey(key) === undefined || value.kind !== "json") return;
  const parsed = parseEntry(value.value);
  if (!parsed.ok) return; // refused by refuseInvalid before this
  const node = await ctx.tree.get(POLICY_KEY);
  const policy = Policy.safeParse(node && node.kind === "json" ? node.value.value : {});
  if (!policy.success) throw new ToolError("denied", `the policy at ${POLICY_KEY} is invalid; tell the user`);
  const { grant, rule } = grantOf(policy.data.grants, ctx.vid);
  const entry = parsed.entry;
  if ("command" in entry && !grant.exec)
    throw new ToolError(
      "denied",
      `registering a command as an MCP server needs the power "exec" (run commands), which run ${ctx.vid} does not hold (rule: ${rule}.exec); ask the user to register it`,
    );
  if ("url" in entry && !hostAllowed(new URL(entry.url), netHosts(policy.data, grant)))
    throw new ToolError(
      "denied",
      `registering ${entry.url} as an MCP server needs the power "net" to ${new URL(entry.url).host}, which run ${ctx.vid} does not hold (rule: ${rule}.net); ask the user to register it`,
    );
}

/** A run's declarations stay within the policy's agentTools bounds (tools/catalogue/agent-tools.ts). */
async function guardCatalogueRoom(ctx: ToolContext, key: string, value: TreeValue): Promise<void> {
  if (!key.startsWith(TOOLS_DIR)) return;
  const node = await ctx.tree.get(POLICY_KEY);
  const policy = Policy.safeParse(node && node.kind === "json" ? node.value.value : {});
  if (!policy.success) throw new ToolError("denied", `the policy at ${POLICY_KEY} is invalid; tell the user`);
  await checkCatalogueRoom(ctx.tree, policy.data.agentTools, ctx.vid, key, value);
}

/** Tells the model at once whether the tool it just declared will work. */
async function declarationNote(name: string, value: TreeValue, ctx: ToolContext): Promise<string> {
  const parsed = parseDeclaration(value.kind === "json" ? value.value : value.value, { name });
  if (!parsed.ok) return ""; // never: refuseInvalid refused it before the write
  const node = await ctx.tree.get(POLICY_KEY);
  const policy = Policy.safeParse(node && node.kind === "json" ? node.value.value : {});
  if (!policy.success)
    return ` Warning: the policy at ${POLICY_KEY} is invalid, so no tool can be called; tell the user.`;
  const kind = parsed.declaration.impl.kind;
  const legacy = policy.data.agentImpls;
  if (legacy && !legacy.includes(kind))
    return ` Warning: the policy's legacy agentImpls rule does not allow tools declared by an agent to use impl kind "${kind}" (allowed: ${legacy.join(", ") || "none"}), so calls to ${name} will be denied.`;
  const impl = parsed.declaration.impl;
  const needs: readonly Power[] =
    impl.kind === "builtin"
      ? builtinPowers(impl.ref)
      : impl.kind === "shell"
        ? ["exec"]
        : impl.kind === "llm"
          ? ["model"]
          : [];
  const { grant, rule } = grantOf(policy.data.grants, ctx.vid);
  const missing = needs.filter((p) => p !== "tree" && p !== "net" && !grant[p]);
  if (missing.length)
    return ` Warning: ${name} needs the power ${missing.map((p) => `"${p}"`).join(", ")}, which this run does not hold (${rule}), so calls to it will be denied.`;
  return ` ${name} can be called now.`;
}
