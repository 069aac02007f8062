/**
 * Change events → notifications on the instances that hold a connection (stdio connections and
 * 2025-era HTTP sessions). 2026-era HTTP requests get theirs through the handler's listen streams
 * (mcp/http.ts). A notification that cannot be sent (a connection going away) is dropped.
 */
import type { TreeChange } from "./live.js";
import { keyToUri } from "./resources.js";
import type { McpInstance } from "./server.js";

export function notifyInstances(instances: Iterable<McpInstance>, change: TreeChange): void {
  // Every call's record is a change: its URIs are made only for an instance that may want one.
  let uris: Array<readonly [string, string]> | undefined;
  const urisOf = () => {
    uris ??= change.keys.map((k) => [k, keyToUri(k)] as const);
    return uris;
  };
  for (const instance of instances) {
    const { server, era, subscriptions, listening } = instance;
    if (!server.transport) continue;
    // A 2026-era stdio connection says what it listens for; nothing else is made for it.
    const wants = (kind: "tools" | "prompts" | "resources") =>
      change[kind] && (!listening || listening.wants(kind));
    if (wants("tools")) send(() => server.sendToolListChanged());
    if (wants("prompts")) send(() => server.sendPromptListChanged());
    if (wants("resources")) send(() => server.sendResourceListChanged());
    const mayWant = era === "modern" ? !listening || listening.wantsAnyUri() : subscriptions.size > 0;
    if (!mayWant) continue;
    for (const [key, uri] of urisOf())
      for (const t of updated(instance, key, uri)) send(() => server.sendResourceUpdated({ uri: t }));
  }
}

/** The resource URIs to tell `instance` are updated when `key` (at `uri`) changed. */
function updated({ era, subscriptions, listening }: McpInstance, key: string, uri: string): string[] {
  // 2026 era: the SDK's listen stream filters by the client's subscription list (a stdio one's, here).
  if (era === "modern") return !listening || listening.wantsUri(uri) ? [uri] : [];
  // 2025 era: only what the client subscribed to (a deleted directory covers what was under it).
  if (key.endsWith("/")) return [...subscriptions].filter((s) => s.startsWith(uri));
  return subscriptions.has(uri) ? [uri] : [];
}

function send(notification: () => Promise<void>): void {
  try {
    notification().catch(() => {});
  } catch {
    // not connected (any more): nothing to tell
  }
}
