import { randomBytes } from "node:crypto";

/** The one rule for a run id (vid): a tree key segment, so it can name /byteseek/tool/<vid>/. */
export const RUN_ID_PART = "[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,127}";

export const RUN_ID = new RegExp(`^${RUN_ID_PART}$`);

/** What a person or model is told when a run id breaks the rule. */
export const RUN_ID_RULE = "use letters, digits and _.:@- (at most 128)";

export function isRunId(vid: unknown): vid is string {
  return typeof vid === "string" && RUN_ID.test(vid);
}

/** A fresh run id: `r`, the time in base 36 and 6 random hex digits (a run started without --vid). */
export function newVid(): string {
  return `r${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}
