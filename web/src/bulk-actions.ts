/**
 * What a directory listing can do with the rows picked (selection.ts): delete them (values with
 * `del`, directories with `deltree`, 128 to a transaction, after a dialog naming the count), move
 * or copy them (POST /v1/move and /v1/copy: each key or directory in one revision).
 */
import { ApiError } from "./api.js";
import { confirmDialog, toast } from "./dialogs.js";
import { byId, h, replace } from "./dom.js";
import { isDir, nameOf } from "./keys.js";
import type { Selection } from "./selection.js";
import { type TreeOps, TXN_MAX_OPS, type TxnOp } from "./tree-ops-api.js";
import { errorText } from "./view-parts.js";

export interface BulkActions {
  /** The bar above the listing: how many rows are picked and what to do with them. */
  el: HTMLElement;
  /** The selection changed: `count` rows are picked. */
  update(count: number): void;
}

export function createBulkActions(
  ops: TreeOps,
  dir: string,
  selection: () => Selection,
  show: { status(text: string): void; error(text: string): void },
): BulkActions {
  const count = h("span", { class: "bulk-count", role: "status", "aria-live": "polite" });
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

  async function deleteSelected(): Promise<void> {
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

  return {
    el,
    update(n) {
      count.textContent = n ? `${n} selected` : "Select rows to delete, move or copy them.";
      for (const b of [del, move, copy]) b.disabled = n === 0;
      clear.hidden = n === 0;
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
): Promise<{ target: string; overwrite: boolean; force: boolean } | null> {
  return new Promise((resolve) => {
    const dialog = byId<HTMLDialogElement>("confirm-dialog");
    const one = keys.length === 1;
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
      h("h2", {}, `${verb} ${one ? first : `${keys.length} items`}`),
      h(
        "p",
        {},
        one
          ? `The new key${isDir(first) ? " (a directory: ending in /)" : ""}, in one revision${kind === "move" ? `; ${first} is gone after` : ""}.`
          : `The directory they go into (ending in /), keeping their names, in one revision.`,
      ),
      h("label", { for: "bulk-target" }, one ? "To key" : "Into directory"),
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
