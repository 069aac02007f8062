/**
 * The keys a run's loop writes about itself, besides its call records (tools/records.ts), its
 * usage (tools/usage.ts) and its last turn (prompts/build.ts).
 */

/** The run's messages: `/byteseek/session/<vid>/<n>`, dense from 0. */
export const sessionDir = (vid: string): string => `/byteseek/session/${vid}/`;
/** `running`, `waiting <approval>`, `done`, `failed`, or `interrupted` (agent/runs.ts). */
export const statusKey = (vid: string): string => `/vthread/${vid}/status`;
/** Why the last turn ended: its stop reason, and for a failure what went wrong. */
export const reasonKey = (vid: string): string => `/vthread/${vid}/reason`;
