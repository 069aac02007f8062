/**
 * The documents byteseek stores at its own keys (keys.ts), each with the schema it is read back
 * with: `readDoc(tree, docs.approval, key)` answers a parsed entry or `DOC_MALFORMED`. The schemas
 * are declared once, beside the code that owns each document; this map only names them.
 * docs/ARCHITECTURE.md ("The tree's own keys") is the table of keys and documents.
 */
import { RecordDoc } from "../records/records.js";
import { ApprovalEntry } from "./approval-entry.js";
import { docFamily } from "./read-write.js";

export const docs = {
  /** `/byteseek/tool/<vid>/<n>`: a call's record (started, then done). */
  toolRecord: RecordDoc,
  /** `/byteseek/approval/<vid>/<n>`: a call or change waiting for a person, and the decision. */
  approval: docFamily("an approval entry", ApprovalEntry),
} as const;
