/** What the tools panel, a tool's page and a run's records share: the catalogue's entries, badges, errors. */
import { type Api, ApiError } from "./api.js";
import { h } from "./dom.js";
import { routeUrl } from "./keys.js";
import type { ToolJson, ToolsJson } from "./wire.js";

/** A declared tool as the pages show it: a valid declaration, or an invalid one with its problems. */
export interface ToolEntry {
  name: string;
  key: string;
  status: "enabled" | "disabled" | "invalid";
  /** The declaration as `GET /v1/tools` gives it; absent when it is invalid. */
  tool?: ToolJson;
  problems: string[];
}

/**
 * `GET /v1/tools` as one list by name: the valid declarations and the invalid ones; with `query`,
 * the tools that match it, best first (`GET /v1/tools?search=`).
 */
export async function toolEntries(api: Api, query = "", limit = 50): Promise<ToolEntry[]> {
  if (query.trim() !== "")
    return (await api.searchTools(query.trim(), limit)).tools.map((t) => ({
      name: t.name,
      key: t.key,
      status: t.enabled ? ("enabled" as const) : ("disabled" as const),
      tool: t,
      problems: [],
    }));
  const { tools, invalid }: ToolsJson = await api.tools();
  const out: ToolEntry[] = [
    ...tools.map((t) => ({
      name: t.name,
      key: t.key,
      status: t.enabled ? ("enabled" as const) : ("disabled" as const),
      tool: t,
      problems: [],
    })),
    ...invalid.map((t) => ({ ...t, status: "invalid" as const })),
  ];
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One tool's entry (`GET /v1/tools?name=`), or undefined when no declaration has that name. */
export async function toolEntry(api: Api, name: string): Promise<ToolEntry | undefined> {
  const { tools, invalid } = await api.tool(name);
  const t = tools[0];
  if (t) return { name, key: t.key, status: t.enabled ? "enabled" : "disabled", tool: t, problems: [] };
  const bad = invalid[0];
  return bad ? { ...bad, status: "invalid" } : undefined;
}

/** Tools › `here`: the way back to the tools panel from a page below it. */
export function toolsBreadcrumb(here: string): HTMLElement {
  return h(
    "nav",
    { class: "breadcrumb", "aria-label": "Breadcrumb" },
    h(
      "ol",
      {},
      h("li", {}, h("a", { href: routeUrl({ view: "tools" }) }, "Tools")),
      h("li", {}, h("span", { "aria-current": "location" }, here)),
    ),
  );
}

export function badge(kind: string): HTMLElement {
  return h("span", { class: `kind-badge kind-${kind}` }, kind);
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError && err.status === 404 && err.code === "HTTP_NOT_FOUND")
    return `${err.message} (this server has no tool runtime)`;
  return err instanceof ApiError ? `${err.message} (${err.code})` : (err as Error).message;
}

/** Calls `fn` once per burst of changes (an agent writes many records in a row). */
export function debounced(fn: () => void, ms = 80): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
  };
}
