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
  for (const { server, era, subscriptions, listening } of instances) {
    if (!server.transport) continue;
    // A 2026-era stdio connection says what it listens for; nothing else is made for it.
    if (change.tools && (!listening || listening.wants("tools"))) send(() => server.sendToolListChanged());
    if (change.prompts && (!listening || listening.wants("prompts")))
      send(() => server.sendPromptListChanged());
    if (change.resources && (!listening || listening.wants("resources")))
      send(() => server.sendResourceListChanged());
    const mayWant = era === "modern" ? !listening || listening.wantsAnyUri() : subscriptions.size > 0;
    if (!mayWant) continue;
    for (const [key, uri] of urisOf()) {
      // 2025 era: only what the client subscribed to (a deleted directory covers what was under it).
      // 2026 era: the SDK's listen stream filters by the client's subscription list.
      const targets =
        era === "modern"
          ? listening && !listening.wantsUri(uri)
            ? []
            : [uri]
          : key.endsWith("/")
            ? [...subscriptions].filter((s) => s.startsWith(uri))
            : subscriptions.has(uri)
              ? [uri]
              : [];
      for (const t of targets) send(() => server.sendResourceUpdated({ uri: t }));
    }
  }
}

function send(notification: () => Promise<void>): void {
  try {
    notification().catch(() => {});
  } catch {
    // not connected (any more): nothing to tell
  }
}
