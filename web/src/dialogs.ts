import { byId, h, replace } from "./dom.js";

const TOKEN_KEY = "byteseek.token";

/** The bearer token, kept for the browser session (sessionStorage: gone when the tab closes). */
export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

let asking: Promise<boolean> | null = null;

/**
 * Asks for the token once, however many requests were refused at the same time. Resolves true
 * when a token was entered, false when the dialog was dismissed.
 */
export function askToken(message: string): Promise<boolean> {
  if (asking) return asking;
  asking = new Promise<boolean>((resolve) => {
    const dialog = byId<HTMLDialogElement>("token-dialog");
    const input = h("input", { type: "password", id: "token-input", autocomplete: "off", required: true });
    const form = h(
      "form",
      { method: "dialog" },
      h("h2", { id: "token-title" }, "Token"),
      h(
        "p",
        {},
        `${message} Open the address byteseek serve printed at start (…/?token=…), or enter the token (BYTESEEK_TOKEN, or the store folder's token file); it is kept for this browser session only.`,
      ),
      h("label", { for: "token-input" }, "Bearer token"),
      input,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Use token")),
    );
    let given = false;
    form.addEventListener("submit", () => {
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      given = true;
    });
    dialog.addEventListener(
      "close",
      () => {
        asking = null;
        resolve(given);
      },
      { once: true },
    );
    replace(dialog, form);
    dialog.showModal();
    input.focus();
  });
  return asking;
}

/** A modal yes/no question; resolves true when confirmed. Escape or Cancel answer no. */
export function confirmDialog(title: string, message: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = byId<HTMLDialogElement>("confirm-dialog");
    const cancel = h("button", { type: "submit", value: "cancel" }, "Cancel");
    const form = h(
      "form",
      { method: "dialog" },
      h("h2", {}, title),
      h("p", {}, message),
      h(
        "div",
        { class: "actions" },
        cancel,
        h("button", { type: "submit", value: "ok", class: "danger" }, confirmLabel),
      ),
    );
    dialog.returnValue = "";
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    replace(dialog, form);
    dialog.showModal();
    cancel.focus();
  });
}

/** A short message in the status line at the bottom (read out by screen readers). */
let toastTimer: ReturnType<typeof setTimeout> | undefined;

export function toast(message: string, kind: "ok" | "error" = "ok"): void {
  const el = byId("toast");
  el.className = kind;
  el.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.textContent = "";
  }, 8000);
}
