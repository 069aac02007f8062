/**
 * The keys a run's loop writes about itself, besides its call records (tools/records/records.ts),
 * its usage (tools/records/usage.ts) and its last turn (prompts/build.ts); all built by
 * shared/keys.ts.
 */

import { keys, runDirs } from "../shared/keys.js";

/** The run's messages: `/byteseek/session/<vid>/<n>`, dense from 0. */
export const sessionDir = runDirs.sessions;
/** `running`, `waiting <approval>`, `done`, `failed`, or `interrupted` (agent/runs.ts). */
export const statusKey = keys.runStatus;
/** Why the last turn ended: its stop reason, and for a failure what went wrong. */
export const reasonKey = keys.runReason;
