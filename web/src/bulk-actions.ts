/**
 * What a directory listing can do with the rows picked (selection.ts): delete them (values with
 * `del`, directories with `deltree`, 128 to a transaction, after a dialog naming the count), move
 * or copy them (POST /v1/move and /v1/copy: each key or directory in one revision).
 *
 * With every loaded row picked and more in the directory than loaded, "Select all N" picks the
 * directory's whole content, loaded or not: then each action is one tree-level operation on the
 * directory, in one revision — delete is `deltree` + `mkindex` of it (it stays, empty), move is a
 * move of it + `mkindex` (a transaction), copy is POST /v1/copy of it — never a request per row.
 */
import { ApiError } from "./api.js";
import { confirmDialog, toast } from "./dialogs.js";
import { byId, h, replace } from "./dom.js";
import { isDir, nameOf } from "./keys.js";
import type { Selection } from "./selection.js";
import { type TreeOps, TXN_MAX_OPS, type TxnOp } from "./tree-ops-api.js";
import { errorText } from "./view-parts.js";
import type { VisibleCounts } from "./visible-count.js";

export interface BulkActions {
  /** The bar above the listing: how many rows are picked and what to do with them. */
  el: HTMLElement;
  /** The selection changed: `count` rows are picked. */
  update(count: number): void;
}

/** What the listing knows beyond its rows: whether more are to load, and how many the directory holds. */
export interface ListingFacts {
  /** The directory has more children than the rows loaded. */
  more(): boolean;
  /** Its number of children as a person counts them (written into an element: visible-count.ts). */
  counts: VisibleCounts;
  /** Its number of children as the tree counts them (system entries included), when known. */
  count(): number | undefined;
}

export function createBulkActions(
  ops: TreeOps,
  dir: string,
  selection: () => Selection,
  show: { status(text: string): void; error(text: string): void },
  listing: ListingFacts,
): BulkActions {
  const count = h("span", { class: "bulk-count", role: "status", "aria-live": "polite" });
  /** The directory's whole content is picked, not only the rows loaded. */
  let whole = false;
  const selectWhole = h("button", {
    type: "button",
    class: "link",
    id: "bulk-select-whole",
    hidden: true,
    onclick: () => {
      whole = true;
      render(selection().keys().length);
    },
  });
  const button = (id: string, label: string, onclick: () => Promise<void>, cls = "") =>
    h("button", { type: "button", id, class: cls, disabled: true, onclick: () => void run(onclick) }, label);
  const del = button("bulk-delete", "Delete…", deleteSelected, "danger");
  const move = button("bulk-move", "Move…", () => transfer("move"));
  const copy = button("bulk-copy", "Copy…", () => transfer("copy"));
  const clear = h(
    "button",
    { type: "button", class: "link", id: "bulk-clear", hidden: true, onclick: () => selection().clear() },
    "Clear the selection",
  );
  const el = h(
    "div",
    { class: "bulk-bar", role: "toolbar", "aria-label": "Selected rows" },
    count,
    selectWhole,
    del,
    move,
    copy,
    clear,
  );

  async function run(what: () => Promise<void>): Promise<void> {
    show.error("");
    try {
      await what();
    } catch (err) {
      show.error(errorText(err));
    }
  }

  /** The directory's number of children, as a person counts them, worded by `format` into `el` (undefined: not known). */
  function showCount(el: HTMLElement, format: (n?: number) => string): void {
    const n = listing.count();
    if (n === undefined) el.textContent = format();
    else listing.counts.show(el, dir, n, format);
  }

  async function deleteWhole(): Promise<void> {
    const ok = await confirmDialog(
      `Delete everything in ${dir}?`,
      `Delete every entry of ${dir}, loaded or not, with everything under them, in one revision? The directory stays, empty. This cannot be undone.`,
      "Delete everything",
    );
    if (!ok) return;
    const r = await ops.txn([
      { op: "deltree", key: dir },
      { op: "mkindex", key: dir },
    ]);
    const removed = Math.max(0, (r.results[0]?.removed ?? 1) - 1);
    whole = false;
    selection().clear();
    toast(`Deleted everything in ${dir} (${removed} key${removed === 1 ? "" : "s"}) at revision ${r.rev}`);
    show.status(`Deleted everything in ${dir}.`);
  }

  async function transferWhole(kind: "move" | "copy"): Promise<void> {
    const answer = await targetDialog(kind, [], dir, true);
    if (!answer) return;
    const { target, overwrite, force } = answer;
    const opts = { ...(overwrite ? { overwrite } : {}), ...(force ? { force } : {}) };
    let landed: number;
    let rev: number;
    try {
      if (kind === "copy") {
        const r = await ops.transfer("copy", dir, target, opts);
        [landed, rev] = [r.keys, r.revision];
      } else {
        // the directory moves whole, and is made again where it was: one transaction, one revision
        const r = await ops.txn([
          { op: "move", key: dir, to: target, ...opts },
          { op: "mkindex", key: dir },
        ]);
        [landed, rev] = [r.results[0]?.keys ?? 0, r.rev];
      }
    } catch (err) {
      throw new Error(`${dir} → ${target}: ${transferError(kind, err)}`);
    }
    // the directory itself is among the keys written
    landed = Math.max(0, landed - 1);
    if (kind === "move") {
      whole = false;
      selection().clear();
    }
    const verb = kind === "move" ? "Moved" : "Copied";
    toast(
      `${verb} everything in ${dir} (${landed} key${landed === 1 ? "" : "s"}) to ${target} at revision ${rev}`,
    );
    show.status(`${verb} everything in ${dir} to ${target}.`);
  }

  async function deleteSelected(): Promise<void> {
    if (whole) return deleteWhole();
    const keys = selection().keys();
    if (!keys.length) return;
    const dirs = keys.filter(isDir).length;
    const values = keys.length - dirs;
    const what = [
      values ? `${values} value${values === 1 ? "" : "s"}` : "",
      dirs
        ? `${dirs} director${dirs === 1 ? "y" : "ies"} with everything under ${dirs === 1 ? "it" : "them"}`
        : "",
    ]
      .filter(Boolean)
      .join(" and ");
    const ok = await confirmDialog(
      `Delete ${keys.length} key${keys.length === 1 ? "" : "s"}?`,
      `Delete ${what} from ${dir}? ${keys.length > TXN_MAX_OPS ? `They go ${TXN_MAX_OPS} to a transaction. ` : ""}This cannot be undone.`,
      `Delete ${keys.length}`,
    );
    if (!ok) return;
    let done = 0;
    for (let i = 0; i < keys.length; i += TXN_MAX_OPS) {
      const chunk = keys.slice(i, i + TXN_MAX_OPS);
      const txn: TxnOp[] = chunk.map((key) => ({ op: isDir(key) ? "deltree" : "del", key }));
      try {
        await ops.txn(txn);
      } catch (err) {
        throw new Error(
          `${done ? `${done} of ${keys.length} deleted, then: ` : "Nothing deleted: "}${errorText(err)}`,
        );
      }
      done += chunk.length;
    }
    selection().clear();
    toast(`Deleted ${done} key${done === 1 ? "" : "s"} from ${dir}`);
    show.status(`Deleted ${done} key${done === 1 ? "" : "s"}.`);
  }

  async function transfer(kind: "move" | "copy"): Promise<void> {
    if (whole) return transferWhole(kind);
    const keys = selection().keys();
    if (!keys.length) return;
    const answer = await targetDialog(kind, keys, dir);
    if (!answer) return;
    const { target, overwrite, force } = answer;
    const verb = kind === "move" ? "Moved" : "Copied";
    let landed = 0;
    if (keys.length === 1) {
      // One key: the target is its new key (POST /v1/move or /v1/copy).
      const from = keys[0] as string;
      try {
        landed = (await ops.transfer(kind, from, target, { overwrite, force })).keys;
      } catch (err) {
        throw new Error(`${from} → ${target}: ${transferError(kind, err)}`);
      }
    } else {
      // Several: into the target directory, names kept, 128 to a transaction (one revision each).
      let done = 0;
      for (let i = 0; i < keys.length; i += TXN_MAX_OPS) {
        const chunk = keys.slice(i, i + TXN_MAX_OPS);
        const txn: TxnOp[] = chunk.map((key) => ({
          op: kind,
          key,
          to: target + nameOf(key),
          ...(overwrite ? { overwrite } : {}),
          ...(force ? { force } : {}),
        }));
        try {
          const r = await ops.txn(txn);
          for (const x of r.results) landed += x?.keys ?? 0;
        } catch (err) {
          throw new Error(
            `${done ? `${done} of ${keys.length} done, then: ` : "Nothing done: "}${transferError(kind, err)}`,
          );
        }
        done += chunk.length;
      }
    }
    if (kind === "move") selection().clear();
    const items = `${keys.length} item${keys.length === 1 ? "" : "s"}`;
    toast(`${verb} ${items} (${landed} key${landed === 1 ? "" : "s"}) to ${target}`);
    show.status(`${verb} ${items} to ${target}.`);
  }

  function render(n: number): void {
    // every loaded row picked, and more to load: the whole directory can be picked (not the root: it cannot move)
    const offer = !whole && n > 0 && selection().all.checked && listing.more() && dir !== "/";
    if (whole)
      showCount(
        count,
        (all) => `All ${all === undefined ? "the" : all} entries of ${dir} selected, loaded or not.`,
      );
    else count.textContent = n ? `${n} selected` : "Select rows to delete, move or copy them.";
    selectWhole.hidden = !offer;
    if (offer) showCount(selectWhole, (all) => `Select all${all === undefined ? "" : ` ${all}`} in ${dir}`);
    for (const b of [del, move, copy]) b.disabled = n === 0 && !whole;
    clear.hidden = n === 0 && !whole;
  }

  return {
    el,
    update(n) {
      // a row let go, or the selection cleared: no longer the whole directory
      if (whole && !selection().all.checked) whole = false;
      render(n);
    },
  };
}

/** What a refused move or copy means, and what to do. */
function transferError(kind: "move" | "copy", err: unknown): string {
  if (err instanceof ApiError && err.code === "HTTP_NOT_FOUND")
    return `this server has no ${kind} yet (${errorText(err)})`;
  if (err instanceof ApiError && err.code === "TREE_EXISTS")
    return `${err.message} — tick “overwrite” to replace what is there`;
  if (err instanceof ApiError && err.code === "TREE_READ_ONLY")
    return `${err.message} — tick “force” to ${kind} read-only keys`;
  return errorText(err);
}

/**
 * Asks where to: for one key its new key (a rename or a move), for several the directory they go
 * into. Resolves null when cancelled.
 */
function targetDialog(
  kind: "move" | "copy",
  keys: string[],
  dir: string,
  whole = false,
): Promise<{ target: string; overwrite: boolean; force: boolean } | null> {
  return new Promise((resolve) => {
    const dialog = byId<HTMLDialogElement>("confirm-dialog");
    const one = !whole && keys.length === 1;
    const first = keys[0] as string;
    const input = h("input", {
      id: "bulk-target",
      required: true,
      spellcheck: "false",
      autocomplete: "off",
      value: one ? first : dir,
    });
    const overwrite = h("input", { type: "checkbox", id: "bulk-overwrite" });
    const force = h("input", { type: "checkbox", id: "bulk-force" });
    const error = h("p", { class: "field-error", role: "alert" });
    const verb = kind === "move" ? "Move" : "Copy";
    const form = h(
      "form",
      { method: "dialog" },
      h("h2", {}, `${verb} ${whole ? `everything in ${dir}` : one ? first : `${keys.length} items`}`),
      h(
        "p",
        {},
        whole
          ? `The directory that takes every entry of ${dir}, loaded or not, names kept, in one revision. It must not exist yet, unless you tick “overwrite”: then what it holds now is replaced.${kind === "move" ? ` ${dir} stays, empty.` : ""}`
          : one
            ? `The new key${isDir(first) ? " (a directory: ending in /)" : ""}, in one revision${kind === "move" ? `; ${first} is gone after` : ""}.`
            : `The directory they go into (ending in /), keeping their names, in one revision.`,
      ),
      h("label", { for: "bulk-target" }, one ? "To key" : whole ? "To directory" : "Into directory"),
      input,
      h("label", { class: "check" }, overwrite, " overwrite what is there"),
      h("label", { class: "check" }, force, " force: read-only keys too"),
      error,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "submit", value: "cancel", formnovalidate: true }, "Cancel"),
        h("button", { type: "submit", value: "ok", class: "primary", id: "bulk-target-ok" }, verb),
      ),
    );
    form.addEventListener("submit", (e) => {
      const submitter = (e as SubmitEvent).submitter as HTMLButtonElement | null;
      if (submitter?.value !== "ok") return;
      const t = input.value.trim();
      const why = !t.startsWith("/")
        ? "a key starts with /"
        : !one && !isDir(t)
          ? "a directory ends with /"
          : whole && (t.startsWith(dir) || dir.startsWith(t))
            ? `not ${dir} itself, inside it, nor a directory holding it`
            : one && isDir(first) !== isDir(t)
              ? isDir(first)
                ? "a directory's new key ends with /"
                : "a value's new key does not end with /"
              : keys.some((k) => k === (one ? t : t + nameOf(k)))
                ? "that is where it is already"
                : null;
      if (why) {
        e.preventDefault();
        error.textContent = why;
        input.focus();
      }
    });
    dialog.returnValue = "";
    dialog.addEventListener(
      "close",
      () => {
        const t = input.value.trim();
        resolve(
          dialog.returnValue === "ok"
            ? { target: t, overwrite: overwrite.checked, force: force.checked }
            : null,
        );
      },
      { once: true },
    );
    replace(dialog, form);
    dialog.showModal();
    input.focus();
    input.select();
  });
}
