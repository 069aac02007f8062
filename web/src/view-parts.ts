/** Pieces the node views share: what a view is, the breadcrumb, metadata, errors, a diff. */
import { dirs, runOf } from "../../shared/keys.js";
import { ApiError } from "./api.js";
import type { diffLines } from "./diff.js";
import { h } from "./dom.js";
import { ancestors, nameOf, type Route, routeUrl } from "./keys.js";
import type { Change } from "./watch.js";

/** What the main area shows; views hear about live changes while they are on screen. */
export interface View {
  el: HTMLElement;
  onChanges?(changes: Change[]): void;
  /** The watch lost its place: re-read everything. */
  reload?(): void;
}

export type Navigate = (route: Route) => void;

export function breadcrumb(key: string): HTMLElement {
  const chain = [...ancestors(key), ...(key === "/" ? [] : [key])];
  return h(
    "nav",
    { "aria-label": "Breadcrumb", class: "breadcrumb" },
    h(
      "ol",
      {},
      ...chain.map((k, i) =>
        h(
          "li",
          {},
          i === chain.length - 1
            ? h("span", { "aria-current": "location" }, nameOf(k))
            : h("a", { href: routeUrl({ view: "tree", key: k }) }, nameOf(k)),
        ),
      ),
    ),
  );
}

export function metaList(entries: Array<[string, string]>): HTMLElement {
  return h("dl", { class: "meta" }, ...entries.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

export function errorText(err: unknown): string {
  return err instanceof ApiError ? `${err.message} (${err.code})` : (err as Error).message;
}

/** A rendered diff: removed lines marked `-`, added `+`. */
export function diffBlock(lines: ReturnType<typeof diffLines>): HTMLElement {
  if (lines.every((l) => l.op === " ")) return h("p", { class: "muted" }, "(no difference)");
  return h(
    "pre",
    { class: "diff" },
    ...lines.map((l) =>
      h("span", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "same" }, `${l.op} ${l.text}\n`),
    ),
  );
}

/** The run (`vid`) whose records a key belongs to, if it is under /byteseek/tool/<vid>/. */
export function recordsVid(key: string): string | undefined {
  return runOf(dirs.records, key);
}
