/**
 * The documents byteseek stores at its own keys (keys.ts), each with the schema it is read back
 * with: `readDoc(tree, docs.approval, key)` answers a parsed entry, undefined when absent, or
 * `DOC_MALFORMED`. The schemas are declared once, beside the code that owns each document; this
 * map only names them. docs/ARCHITECTURE.md ("The tree's own keys") is the table of keys and
 * documents.
 */

import { AcceptanceDoc } from "../catalogue/agent-tools.js";
import { ToolDeclaration } from "../catalogue/declaration.js";
import { ShippedDoc } from "../catalogue/shipped.js";
import { Policy } from "../gate/policy.js";
import { SignInEntryDoc } from "../mcp/oauth/entry.js";
import { McpServerEntry } from "../mcp/registry.js";
import { SyncStateDoc } from "../mcp/sync-state.js";
import { RecordDoc } from "../records/records.js";
import { UsageDoc } from "../records/usage.js";
import { ApprovalEntry } from "./approval-entry.js";
import { docFamily } from "./read-write.js";
import { SessionMessageDoc } from "./session-message.js";

export const docs = {
  /** `/byteseek/tool/<vid>/<n>`: a call's record (started, then done). */
  toolRecord: RecordDoc,
  /** `/byteseek/approval/<vid>/<n>`: a call or change waiting for a person, and the decision. */
  approval: docFamily("an approval entry", ApprovalEntry),
  /** `/byteseek/session/<vid>/<n>`: one message of a run. */
  session: SessionMessageDoc,
  /** `/byteseek/usage/<vid>`: a run's call and token counters. */
  usage: UsageDoc,
  /** `/byteseek/tools/<name>`: a tool declaration (the catalogue reads it with `parseDeclaration`, listing an invalid one with its problems). */
  tool: docFamily("a tool declaration", ToolDeclaration),
  /** `/byteseek/tools/‥shipped/<name>`: the hash of the declaration shipped last. */
  shipped: ShippedDoc,
  /** `/byteseek/policy`: the gate policy (an invalid one denies every call: tools/gate/policy.ts). */
  policy: docFamily("the gate policy", Policy),
  /** `/byteseek/tool-accept/<name>`: a person's acceptance of a run's tool for every run. */
  toolAccept: AcceptanceDoc,
  /** `/byteseek/mcp/<server>`: an upstream MCP server's registry entry. */
  mcpServer: docFamily("an MCP server registry entry", McpServerEntry),
  /** `/byteseek/mcp/<server>` as the OAuth sign-in reads and writes it back: its `url` and `oauth`. */
  mcpSignIn: SignInEntryDoc,
  /** `/byteseek/mcp-sync/<server>`: what the last sync of an upstream MCP server kept. */
  mcpSync: SyncStateDoc,
} as const;
