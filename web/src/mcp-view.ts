import { keys } from "../../shared/keys.js";
import { type Api, ApiError } from "./api.js";
import { formatTime, h, replace } from "./dom.js";
import { createHeldView } from "./held-view.js";
import { routeUrl } from "./keys.js";
import type { McpServerJson } from "./wire.js";

const STATE_BADGE: Record<string, string> = {
  running: "ok",
  starting: "ok",
  stopped: "disabled",
  stopping: "disabled",
  disabled: "disabled",
  backoff: "runtime",
  failed: "runtime",
  invalid: "invalid",
};

/**
 * The registry of upstream MCP servers (`/byteseek/mcp/<server>`): each server's state in this
 * byteseek, its target, its synced tools (links to them) and its last sync, with a Sync button; and
 * its tools held for review, each with its diff and an Accept button (held-view.ts).
 */
export function createMcpPanel(api: Api): { el: HTMLElement; reload(): void } {
  const el = h("div", { id: "mcp-servers", "aria-live": "polite" }, h("p", { class: "muted" }, "loading…"));

  async function sync(server: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    button.textContent = "Syncing…";
    try {
      await api.mcpSync(server);
    } catch (err) {
      replace(el, h("p", { class: "error" }, `POST /v1/mcp/sync: ${(err as Error).message}`));
      return;
    }
    await load();
  }

  /** The person signs in at the server's authorization server, which sends them back to byteseek. */
  async function signIn(server: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const { authorizationUrl } = await api.mcpLogin(server);
      window.location.assign(authorizationUrl);
    } catch (err) {
      button.disabled = false;
      replace(el, h("p", { class: "error" }, `POST /v1/mcp/${server}/login: ${(err as Error).message}`));
    }
  }

  /** The codes handed out for a sign-in on another device, shown until the server is signed in. */
  const codes = new Map<
    string,
    { verificationUri: string; userCode: string; verificationUriComplete?: string; expiresAt: number }
  >();

  /**
   * A sign-in with a code, for a browser that cannot reach byteseek's callback (or on another
   * device): the page shows the code and where to enter it; byteseek polls, and the view follows
   * the tree once the tokens are kept.
   */
  async function signInWithCode(server: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      codes.set(server, await api.mcpLoginDevice(server));
      await load();
    } catch (err) {
      button.disabled = false;
      replace(el, h("p", { class: "error" }, `POST /v1/mcp/${server}/login: ${(err as Error).message}`));
    }
  }

  function codePart(server: string): HTMLElement | null {
    const p = codes.get(server);
    if (!p || p.expiresAt < Date.now()) return null;
    const link = h(
      "a",
      { href: p.verificationUriComplete ?? p.verificationUri, target: "_blank", rel: "noopener noreferrer" },
      p.verificationUri,
    );
    return h(
      "span",
      { "data-role": "device-code" },
      " Enter the code ",
      h("code", { "data-user-code": server }, p.userCode),
      " at ",
      link,
      ` before ${formatTime(p.expiresAt)}; this view shows the server signed in once you have.`,
    );
  }

  /** An HTTP server's sign-in: what it needs, when its token expires, and a Sign in button. */
  function authPart(s: McpServerJson): HTMLElement | null {
    const auth = s.auth;
    if (!auth || auth.state === "none") return null;
    const button = h(
      "button",
      { type: "button", "data-sign-in": s.server },
      auth.state === "signed-in" ? "Sign in again" : "Sign in",
    ) as HTMLButtonElement;
    button.addEventListener("click", () => void signIn(s.server, button));
    const withCode = h(
      "button",
      { type: "button", "data-sign-in-device": s.server, title: "Sign in on any device with a code" },
      "Sign in with a code",
    ) as HTMLButtonElement;
    const said =
      auth.state === "signed-in"
        ? `signed in${auth.expiresAt ? `, token until ${formatTime(auth.expiresAt)}` : ""}${auth.refreshable ? " (renewed before then)" : ""}`
        : `needs a person to sign in${auth.needScope ? ` (scopes ${auth.needScope})` : ""}${auth.error ? `: ${auth.error}` : ""}`;
    withCode.addEventListener("click", () => void signInWithCode(s.server, withCode));
    if (auth.state === "signed-in") codes.delete(s.server);
    return h(
      "p",
      { "data-role": "auth", "data-auth": auth.state },
      `${said} `,
      button,
      " ",
      withCode,
      codePart(s.server),
    );
  }

  function row(s: McpServerJson): HTMLElement {
    const button = h("button", { type: "button", "data-sync": s.server }, "Sync") as HTMLButtonElement;
    button.addEventListener("click", () => void sync(s.server, button));
    const synced = s.sync
      ? `last sync ${formatTime(s.sync.ts)} (${s.sync.reason}${s.sync.state === "error" ? ", failed" : ""})`
      : "not synced yet";
    return h(
      "li",
      { "data-server": s.server, "data-state": s.state },
      h("a", { href: routeUrl({ view: "tree", key: keys.mcpServer(s.server) }) }, h("strong", {}, s.server)),
      " ",
      h(
        "span",
        { class: `kind-badge kind-${STATE_BADGE[s.state] ?? "disabled"}`, "data-role": "state" },
        s.state,
      ),
      " ",
      h("span", { class: "kind-badge", title: "transport" }, s.transport ?? "?"),
      " ",
      h("span", { "data-role": "count" }, `${s.tools} tools`),
      s.pid !== undefined ? h("span", { class: "muted" }, ` — pid ${s.pid}`) : null,
      " ",
      button,
      s.target ? h("p", { class: "muted" }, h("code", {}, s.target)) : null,
      authPart(s),
      s.error ? h("p", { class: "problems" }, s.error) : null,
      h("p", { class: "muted" }, synced),
      s.toolNames.length
        ? h(
            "p",
            { class: "mcp-tools" },
            ...s.toolNames.flatMap((n, i) => [
              i ? ", " : "",
              h("a", { href: routeUrl({ view: "tool", name: n }), "data-mcp-tool": n }, n),
            ]),
          )
        : null,
      s.held.length ? createHeldView(api, s.server, () => void load()) : null,
    );
  }

  async function load(): Promise<void> {
    try {
      const { servers } = await api.mcp();
      if (!servers.length)
        return replace(
          el,
          h(
            "p",
            { class: "muted" },
            `No upstream MCP server is registered. Write one at ${keys.mcpServer("<server>")}: {"command": ["prog", "arg"]} or {"url": "https://…/mcp"}.`,
          ),
        );
      replace(el, h("ul", { class: "tool-list" }, ...servers.map(row)));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404)
        return replace(el, h("p", { class: "muted" }, "This server has no MCP client."));
      replace(el, h("p", { class: "error" }, `GET /v1/mcp: ${(err as Error).message}`));
    }
  }

  void load();
  return { el, reload: () => void load() };
}
