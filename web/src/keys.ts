/**
 * Tree keys and the page's own addresses. A key is an absolute `/`-path; one ending in `/` is a
 * directory. In URLs each segment is percent-encoded, so any key round-trips through a link.
 */

export function isDir(key: string): boolean {
  return key.endsWith("/");
}

/** `/a/b/` → `/a/`, `/a/b` → `/a/`, `/` → `/`. */
export function parentOf(key: string): string {
  if (key === "/") return "/";
  const trimmed = isDir(key) ? key.slice(0, -1) : key;
  return trimmed.slice(0, trimmed.lastIndexOf("/") + 1);
}

/** The last segment, with a trailing `/` for a directory: `/a/b/` → `b/`. */
export function nameOf(key: string): string {
  if (key === "/") return "/";
  const trimmed = isDir(key) ? key.slice(0, -1) : key;
  return trimmed.slice(trimmed.lastIndexOf("/") + 1) + (isDir(key) ? "/" : "");
}

/** Every directory from the root down to the one holding `key`: `/a/b/c` → `/`, `/a/`, `/a/b/`. */
export function ancestors(key: string): string[] {
  const out: string[] = [];
  let k = parentOf(key);
  while (true) {
    out.unshift(k);
    if (k === "/") break;
    k = parentOf(k);
  }
  return out;
}

/** The segments of a key, percent-encoded and joined by `/`, keeping a trailing `/`. */
export function encodeKeyPath(key: string): string {
  const body = key.slice(1);
  return body
    .split("/")
    .map((s) => encodeURIComponent(s))
    .join("/");
}

/** `/v1/tree/<key>` for a key. */
export function treeUrl(key: string): string {
  return `/v1/tree/${encodeKeyPath(key)}`;
}

/** What the address bar shows. */
export type Route =
  | { view: "overview" }
  | { view: "tree"; key: string }
  | { view: "tools" }
  | { view: "tool"; name: string }
  /** A run's page, or without `vid` the list of runs (`status`: only those, as the overview's tiles link). */
  | { view: "runs"; vid?: string; status?: string }
  | { view: "agent"; vid?: string };

export function routeUrl(route: Route): string {
  switch (route.view) {
    case "overview":
      return "/";
    case "tree":
      return `/ui/${encodeKeyPath(route.key)}`;
    case "tools":
      return "/tools/";
    case "tool":
      return `/tools/${encodeURIComponent(route.name)}`;
    case "runs":
      if (route.vid) return `/runs/${encodeURIComponent(route.vid)}`;
      return route.status ? `/runs/?status=${encodeURIComponent(route.status)}` : "/runs/";
    case "agent":
      return route.vid ? `/agent/${encodeURIComponent(route.vid)}` : "/agent/";
  }
}

/**
 * Reads a route from a location: `/` is the overview; `#/a/b` (the tree's old hash links, from when
 * it was the landing page) and `/ui` still open the tree.
 */
export function parseRoute(pathname: string, hash = "", search = ""): Route {
  if (hash.startsWith("#/")) return { view: "tree", key: decodeSegments(hash.slice(1)) };
  if (pathname === "/" || pathname === "") return { view: "overview" };
  if (pathname === "/ui") return { view: "tree", key: "/" };
  if (pathname.startsWith("/ui/")) return { view: "tree", key: decodeSegments(pathname.slice(3)) };
  if (pathname === "/tools" || pathname === "/tools/") return { view: "tools" };
  if (pathname.startsWith("/tools/")) return { view: "tool", name: safeDecode(pathname.slice(7)) };
  if (pathname === "/runs" || pathname === "/runs/") {
    const status = new URLSearchParams(search).get("status");
    return status ? { view: "runs", status } : { view: "runs" };
  }
  if (pathname.startsWith("/runs/")) return { view: "runs", vid: safeDecode(pathname.slice(6)) };
  if (pathname === "/agent" || pathname === "/agent/") return { view: "agent" };
  if (pathname.startsWith("/agent/")) return { view: "agent", vid: safeDecode(pathname.slice(7)) };
  return { view: "tree", key: "/" };
}

function decodeSegments(path: string): string {
  return path
    .split("/")
    .map((s) => safeDecode(s))
    .join("/");
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
