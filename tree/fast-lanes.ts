/**
 * The fast lanes and the one setting that turns them off. Where byteseek bypasses a library for
 * speed, the library's own path stays as the reference implementation of the same interface:
 *
 * | lane | fast | reference |
 * | --- | --- | --- |
 * | `http` | server/fast-path.ts: a plain GET or PUT of one value on node:http | fastify's routes |
 * | `mcp` | mcp/fast-call.ts: a plain `tools/call` (HTTP, 2025 sessions, stdio) | the MCP SDK's transports and instances |
 * | `etcd` | tree/etcd/rpc.ts: hand-written protobuf on HTTP/2 sessions of its own | etcd3's public KV and Watch clients |
 * | `relay` | cli/mcp-relay.ts: ids read off the SDKs' line shapes | every line parsed |
 * | http client | tree/http/transport.ts: the HTTP tree's requests on node:http (a quick `kvspace`) | an undici pool |
 *
 * `BYTESEEK_FAST=0` selects the reference lanes everywhere (`1`, or unset: the fast ones). It is
 * the default of each factory's own option (`fastPath`, `fast`, `plainCalls`), read here and only
 * here, so a test suite run with `BYTESEEK_FAST=0` runs every lane it reaches the library's way
 * (the test command runs the lanes' suites both ways: vitest.config.ts's projects). Both lanes answer alike, byte for byte.
 */
import { TreeError } from "./errors.js";

/** The lanes that have a fast implementation beside their library's. */
export const FAST_LANES = ["http", "mcp", "etcd", "relay"] as const;
export type FastLane = (typeof FAST_LANES)[number];

/** Whether the fast lanes are on, from BYTESEEK_FAST (`0`: the reference lanes; `1` or unset: fast). */
export function readFastLanes(env: NodeJS.ProcessEnv): boolean {
  const text = env.BYTESEEK_FAST?.trim();
  if (text === undefined || text === "" || text === "1") return true;
  if (text === "0") return false;
  throw new TreeError(
    "TREE_INVALID_OPTION",
    `BYTESEEK_FAST must be 0 (the libraries' own paths: the reference lanes) or 1 (the fast lanes, the default), got ${JSON.stringify(env.BYTESEEK_FAST)}`,
    { setting: "BYTESEEK_FAST" },
  );
}

/**
 * The default of every lane's option: this process's BYTESEEK_FAST. Read on each call (cheap), so
 * a factory made after the setting changed sees it.
 */
export function fastLanesByDefault(): boolean {
  return readFastLanes(process.env);
}

/** How `byteseek serve` shows the lanes at start: `fast (http, mcp, etcd, relay)` or `reference (BYTESEEK_FAST=0)`. */
export function describeLanes(fast: boolean): string {
  return fast
    ? `fast (${FAST_LANES.join(", ")}; BYTESEEK_FAST=0 for the reference lanes)`
    : "reference (BYTESEEK_FAST=0)";
}
