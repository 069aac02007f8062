/**
 * The catalogue: which tools exist, as declared under /byteseek/tools/. `resolve` answers one name
 * for a call (or the result that refuses it); `listTools` answers every declaration, valid ones by
 * name, invalid ones with their problems. Parsed declarations are memoised by revision.
 */

import { dirs } from "../../shared/keys.js";
import type { Tree, TreeNode } from "../../tree/types.js";
import { failure } from "../call/results.js";
import { confirmation, netHosts } from "../gate/gate.js";
import type { LoadedPolicy, Policy, ToolListPolicy } from "../gate/policy.js";
import { hostAllowed } from "../gate/policy.js";
import { grantOf, type Need, type Power } from "../gate/powers.js";
import { runnerOf } from "../impl/kinds.js";
import { syncedNameOf } from "../mcp/allowed.js";
import type { BuiltinTool, ToolResult } from "../types.js";
import { heldFromOthers, notAcceptedReason, readAcceptances } from "./agent-tools.js";
import { parseDeclaration, type ToolDeclaration, ToolName } from "./declaration.js";
import { hashOf } from "./hash.js";

/** Why every tool is blocked while the policy does not validate. */
export const POLICY_INVALID = "the policy at /byteseek/policy is invalid";

/** Where declarations live: `/byteseek/tools/<name>`. */
export const TOOLS_DIR = dirs.tools;

/** A declaration that parsed, as a model (and the prompt assembler) sees it. */
export interface ValidTool {
  name: string;
  key: string;
  declaration: ToolDeclaration;
  /** The run that last wrote the declaration, when a run did (agent-written). */
  owner?: string;
  /** For a run's tool: the hash of its declaration, and whether a person accepted that version for every run (agent-tools.ts). */
  hash?: string;
  accepted?: boolean;
  /** Why every call would be denied by the policy as it stands (a power the run lacks, a switched-off tool it wraps). */
  blocked?: string;
  /** An upstream MCP tool held for a person's review (changed since accepted): `blocked` says why. */
  held?: boolean;
  /**
   * The rule that makes every call wait for a person's approval, named as the gate names it
   * (`declaration.confirm`, `<ref>.confirm (inherited)`, `confirm[i] (<name>)`), when one does and
   * no standing approval in the policy lifts it: what a reviewer is shown, decided as the gate does.
   */
  approval?: string;
}

export interface InvalidTool {
  name: string;
  key: string;
  problems: string[];
}

export interface ToolCatalogue {
  valid: ValidTool[];
  invalid: InvalidTool[];
  /** The policy's problems when it does not validate (stored unchecked): every call is denied until it is fixed. */
  policyProblems?: string[];
  /** How the policy says a turn's tool list is built (absent while the policy does not validate). */
  toolList?: ToolListPolicy;
}

/** What ran: the declaration's key, the revision it was read at, the hash of its value, and who wrote it. */
export interface DeclRef {
  key: string;
  modRev: number;
  hash: string;
  /** The run that wrote it, or "person" (HTTP, the CLI, the seeder). */
  writer: string;
}

export type Resolved =
  | {
      ok: true;
      key: string;
      declaration: ToolDeclaration;
      agentWritten: boolean;
      decl: DeclRef;
      /** Set when an alias wraps a declaration with confirm: true. */
      inheritedConfirm?: string;
      /** The synced declaration an `mcp` declaration of another name runs. */
      wraps?: string;
    }
  | { ok: false; result: ToolResult; decl?: DeclRef };

export interface Catalogue {
  resolve(name: string): Promise<Resolved>;
  listTools(vid?: string): Promise<ToolCatalogue>;
}

export interface CatalogueOptions {
  tree: Tree;
  registry: ReadonlyMap<string, BuiltinTool>;
  readPolicy: () => Promise<LoadedPolicy>;
  powersOf: (ref: string) => readonly Power[];
  /** The powers an `mcp` tool's server needs (exec for a command, net to its host), as the gate reads them. */
  mcpNeeds?: ((server: string) => Promise<Need[]>) | undefined;
  /** An `mcp` tool's server's upstream tools held for a person's review: listed as blocked, never offered. */
  mcpHeld?: ((server: string) => Promise<ReadonlyMap<string, string>>) | undefined;
}

type Parsed = ReturnType<typeof parseDeclaration>;

export function createCatalogue({
  tree,
  registry,
  readPolicy,
  powersOf,
  mcpNeeds,
  mcpHeld,
}: CatalogueOptions): Catalogue {
  // A declaration's parse and its hash (the records' `decl.hash`), by key, while its modRev holds.
  const parsed = new Map<string, { modRev: number; result: Parsed; hash?: string }>();

  function parseNode(
    key: string,
    name: string,
    node: TreeNode | { kind: string; modRev: number; value?: unknown },
  ): Parsed {
    const hit = parsed.get(key);
    if (hit && hit.modRev === node.modRev) return hit.result;
    let result: Parsed;
    if (node.kind !== "json")
      result = { ok: false, problems: [`a declaration must be a json value, not ${node.kind}`] };
    else {
      const raw = (node as { value?: { value: unknown } }).value?.value;
      result = parseDeclaration(raw, { builtins: registry, name });
    }
    // Sized above the tool counts we expect (1,000 declared tools must not thrash it).
    if (parsed.size > 20_000) parsed.clear();
    parsed.set(key, { modRev: node.modRev, result });
    return result;
  }

  /** The hash of a declaration's value (the records' `decl.hash`), kept with its parse while its modRev holds. */
  function hashOfNode(
    key: string,
    node: TreeNode | { kind: string; modRev: number; value?: unknown },
  ): string {
    const entry = parsed.get(key);
    if (entry?.modRev === node.modRev && entry.hash !== undefined) return entry.hash;
    const raw = node.kind === "json" ? (node as { value?: { value: unknown } }).value?.value : undefined;
    const hash = hashOf(raw);
    if (entry?.modRev === node.modRev) entry.hash = hash;
    return hash;
  }

  async function resolve(name: string): Promise<Resolved> {
    if (!ToolName.safeParse(name).success) return { ok: false, result: await unknownTool(name) };
    const key = `${TOOLS_DIR}${name}`;
    const node = await tree.get(key);
    if (!node || node.kind === "index") return { ok: false, result: await unknownTool(name) };
    const p = parseNode(key, name, node);
    if (!p.ok)
      return {
        ok: false,
        result: failure(
          "vet",
          "invalid_declaration",
          `${name} cannot be called: its declaration at ${key} is invalid:\n- ${p.problems.join("\n- ")}\nFix the declaration (tree.set ${key}) or use another tool.`,
          { key, problems: p.problems },
        ),
      };
    const hash = hashOfNode(key, node);
    const decl: DeclRef = { key, modRev: node.modRev, hash, writer: node.vid ?? "person" };
    if (!p.declaration.enabled)
      return {
        ok: false,
        decl,
        result: failure(
          "vet",
          "disabled_tool",
          `${name} is switched off (enabled: false in ${key}); use another tool, or ask the user to switch it on`,
          { key },
        ),
      };
    const wrapped = await wrappedRules(name, p.declaration);
    if (wrapped.off)
      return { ok: false, decl, result: failure("vet", "disabled_tool", wrapped.off, { key }) };
    return {
      ok: true,
      key,
      declaration: p.declaration,
      agentWritten: node.vid !== undefined,
      decl,
      ...(wrapped.confirm ? { inheritedConfirm: wrapped.confirm } : {}),
      ...(wrapped.wraps ? { wraps: wrapped.wraps } : {}),
    };
  }

  /**
   * A `builtin` alias (a declaration named other than the built-in it runs) takes the rules of the
   * built-in's own declaration at /byteseek/tools/<ref>: switched off (or removed) there, the alias
   * is off too; confirm there, confirm here. So a new name never launders a person's rule.
   */
  async function wrappedRules(
    name: string,
    decl: ToolDeclaration,
  ): Promise<{ off?: string; confirm?: string; wraps?: string }> {
    if (decl.impl.kind === "mcp") return mcpRules(name, decl.impl.server, decl.impl.tool);
    if (decl.impl.kind !== "builtin" || decl.impl.ref === name) return {};
    const ref = decl.impl.ref;
    const baseKey = `${TOOLS_DIR}${ref}`;
    const node = await tree.get(baseKey);
    const base = node && node.kind !== "index" ? parseNode(baseKey, ref, node) : undefined;
    const off = (why: string) =>
      `${name} runs the built-in ${ref}, which ${why}, so ${name} is off too; use another tool, or ask the user`;
    if (!base) return { off: off(`is not declared (${TOOLS_DIR}${ref} was removed)`) };
    if (!base.ok) return { off: off(`has an invalid declaration at ${TOOLS_DIR}${ref}`) };
    if (!base.declaration.enabled) return { off: off("is switched off") };
    return base.declaration.confirm ? { confirm: `${ref}.confirm (inherited)` } : {};
  }

  /**
   * An `mcp` declaration runs an upstream tool, and the rules of that tool are those of its synced
   * declaration (`/byteseek/tools/<server>.<tool>`, as the sync state names it): a declaration of
   * another name pointing at the same upstream tool (a run's own `mcp` declaration) is off when the
   * synced one is off, invalid or gone, and needs approval when it does. An upstream tool no sync
   * declared (left out by the entry's allow-list, or never listed) is off for every declaration.
   */
  async function mcpRules(
    name: string,
    server: string,
    tool: string,
  ): Promise<{ off?: string; confirm?: string; wraps?: string }> {
    const synced = await syncedNameOf(tree, server, tool);
    const off = (why: string) =>
      `${name} calls the tool ${tool} of the MCP server "${server}", which ${why}, so ${name} is off; use another tool, or ask the user`;
    if (synced === undefined)
      return {
        off: off(
          "no sync has declared (its entry's allow-list leaves it out, or the server never listed it)",
        ),
      };
    if (synced === name) return {};
    const key = `${TOOLS_DIR}${synced}`;
    const node = await tree.get(key);
    const base = node && node.kind !== "index" ? parseNode(key, synced, node) : undefined;
    if (!base) return { off: off(`is declared by the sync as ${synced}, which was removed`) };
    if (!base.ok) return { off: off(`is declared as ${synced}, whose declaration is invalid`) };
    if (!base.declaration.enabled) return { off: off(`is declared as ${synced}, which is switched off`) };
    return {
      wraps: synced,
      ...(base.declaration.confirm ? { confirm: `${synced}.confirm (inherited)` } : {}),
    };
  }

  async function unknownTool(name: string): Promise<ToolResult> {
    let known: string[] = [];
    try {
      known = (await listTools()).valid.filter((t) => t.declaration.enabled).map((t) => t.name);
    } catch {
      // The list is only a hint.
    }
    const family = name.split(".")[0];
    const near = known.filter((n) => n.startsWith(`${family}.`));
    const hint = known.length
      ? ` Available tools: ${(near.length ? near : known).slice(0, 40).join(", ")}.`
      : "";
    return failure("vet", "unknown_tool", `There is no tool named "${name}".${hint}`, { name });
  }

  // The catalogue as of one revision: nothing in the tree changed since, so neither did it.
  let listed: { rev: number; catalogue: ToolCatalogue } | undefined;

  async function listTools(vid?: string): Promise<ToolCatalogue> {
    const rev = tree.syncRevision ? await tree.syncRevision() : tree.revision();
    if (listed?.rev !== rev) listed = { rev, catalogue: await readCatalogue() };
    const loaded = await readPolicy();
    const share = loaded.ok ? loaded.policy.agentTools : undefined;
    // An mcp tool needs what its server does (the registry entry, not the declaration): read once per server.
    const servers = new Map<string, Need[]>();
    const held = new Map<string, ReadonlyMap<string, string>>();
    for (const t of listed.catalogue.valid) {
      const impl = t.declaration.impl;
      if (impl.kind !== "mcp" || t.blocked !== undefined) continue;
      if (loaded.ok && mcpNeeds && !servers.has(impl.server))
        servers.set(impl.server, await mcpNeeds(impl.server).catch(() => []));
      if (mcpHeld && !held.has(impl.server))
        held.set(impl.server, await mcpHeld(impl.server).catch(() => new Map()));
    }
    const valid = listed.catalogue.valid.map(function withGrant(t) {
      if (t.blocked !== undefined) return t;
      const impl = t.declaration.impl;
      // a held upstream tool is never offered, whatever the run holds
      const holding = impl.kind === "mcp" ? held.get(impl.server)?.get(impl.tool) : undefined;
      if (holding) return { ...t, blocked: holding, held: true };
      if (!loaded.ok) return t;
      // another run's tool no person accepted (in this version) is not offered to this run
      if (
        share &&
        t.hash &&
        heldFromOthers(share, t.owner, vid ?? "", t.hash, t.accepted ? t.hash : undefined)
      )
        return { ...t, blocked: notAcceptedReason(t.name, t.owner as string) };
      const lacking =
        impl.kind === "mcp"
          ? lackingServerPowers(servers.get(impl.server) ?? [], loaded.policy, vid ?? "")
          : lackingPowers(t.declaration, loaded.policy, vid ?? "");
      return lacking ? { ...t, blocked: lacking } : t;
    });
    return {
      valid,
      invalid: [...listed.catalogue.invalid],
      ...(loaded.ok ? { toolList: loaded.policy.toolList } : { policyProblems: loaded.problems }),
    };
  }

  /** What an mcp tool's server needs (exec, or net to its fixed host) that a run lacks, as the gate decides it. */
  function lackingServerPowers(needs: readonly Need[], policy: Policy, vid: string): string | undefined {
    const { grant, rule } = grantOf(policy.grants, vid);
    for (const need of needs) {
      if (need.power === "net") {
        if (!hostAllowed(need.url, netHosts(policy, grant)))
          return `needs the power "net" to ${need.url.host}, which the policy does not grant (${rule})`;
      } else if (need.power !== "tree" && !grant[need.power])
        return `needs the power "${need.power}", which the policy does not grant (${rule})`;
    }
    return undefined;
  }

  /** The powers a tool needs whatever its arguments (not net, whose host may depend on them) that a run lacks. */
  function lackingPowers(decl: ToolDeclaration, policy: Policy, vid: string): string | undefined {
    const { grant, rule } = grantOf(policy.grants, vid);
    const impl = decl.impl;
    const needs = runnerOf(impl).needs(impl, powersOf);
    const missing = needs.filter((p) => p !== "tree" && p !== "net" && !grant[p]);
    if (missing.length === 0) return undefined;
    return `needs the power ${missing.map((p) => `"${p}"`).join(", ")}, which the policy does not grant (${rule})`;
  }

  async function readCatalogue(): Promise<ToolCatalogue> {
    const valid: ValidTool[] = [];
    const invalid: InvalidTool[] = [];
    const policyLoaded = await readPolicy();
    const acceptances = await readAcceptances(tree);
    let after: string | undefined;
    do {
      let page: Awaited<ReturnType<Tree["list"]>>;
      try {
        page = await tree.list(TOOLS_DIR, { limit: 500, ...(after ? { after } : {}) });
      } catch (err) {
        if ((err as { code?: string }).code === "TREE_NOT_FOUND") break;
        throw err;
      }
      for (const child of page.children) {
        if (child.kind === "index") continue;
        const key = `${TOOLS_DIR}${child.name}`;
        const node = child.value === undefined ? await tree.get(key) : child;
        if (!node) continue;
        const p = parseNode(key, child.name, node);
        if (!p.ok) {
          invalid.push({ name: child.name, key, problems: p.problems });
          continue;
        }
        const tool: ValidTool = { name: child.name, key, declaration: p.declaration };
        if (node.vid !== undefined) {
          tool.owner = node.vid;
          tool.hash = hashOfNode(key, node);
          tool.accepted = acceptances.get(child.name) === tool.hash;
        }
        const legacy = policyLoaded.ok ? policyLoaded.policy.agentImpls : undefined;
        if (!policyLoaded.ok) tool.blocked = POLICY_INVALID;
        else if (node.vid !== undefined && legacy && !legacy.includes(p.declaration.impl.kind))
          tool.blocked = `agent-written tools may not use impl kind "${p.declaration.impl.kind}" (the policy's legacy agentImpls rule)`;
        else {
          const wrapped = await wrappedRules(child.name, p.declaration);
          if (wrapped.off) tool.blocked = wrapped.off;
          const impl = p.declaration.impl;
          const { rule, standing } = confirmation(policyLoaded.policy, {
            name: child.name,
            ref: impl.kind === "builtin" ? impl.ref : wrapped.wraps,
            confirm: p.declaration.confirm,
            inheritedConfirm: wrapped.confirm,
            declHash: hashOfNode(key, node),
          });
          if (rule !== undefined && standing < 0) tool.approval = rule;
        }
        valid.push(tool);
      }
      after = page.next;
    } while (after);
    return { valid, invalid };
  }

  return { resolve, listTools };
}
