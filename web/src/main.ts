import { keys } from "../../shared/keys.js";
import { createApi } from "./api.js";
import { createApprovalsPanel } from "./approvals-view.js";
import { createChatView } from "./chat-view.js";
import { askToken, storedToken, toast } from "./dialogs.js";
import { byId, replace } from "./dom.js";
import { createKeySearch } from "./key-search.js";
import { parseRoute, type Route, routeUrl } from "./keys.js";
import { createNodeView } from "./node-view.js";
import { createOverviewView } from "./overview-view.js";
import { createRunView } from "./run-view.js";
import { createRunsView } from "./runs-view.js";
import { createSearch } from "./search.js";
import { createToolView } from "./tool-view.js";
import { createToolsView } from "./tools-view.js";
import { createTreeOps } from "./tree-ops-api.js";
import { createTreePane } from "./tree-pane.js";
import type { View } from "./view-parts.js";
import { startWatch, type WatchState } from "./watch.js";

/**
 * The header names the folder the agent's file tools work in (a server without a runtime has none);
 * when commands do not run sandboxed (the policy's "sandbox": "off", or no bubblewrap here) a banner
 * says so above everything, with how to turn the sandbox on, for as long as the page is open.
 */
function showWorkspace(api: ReturnType<typeof createApi>): void {
  const el = byId("workspace");
  api.info().then(
    ({ workspace, sandbox }) => {
      if (workspace !== undefined) {
        el.textContent = `workspace: ${workspace}`;
        el.title = `${workspace}: the folder the agent's file tools work in (BYTESEEK_WORKSPACE); paths are relative to it`;
        el.hidden = false;
      }
      const banner = byId("sandbox-banner");
      if (sandbox && sandbox.state !== "on") {
        banner.textContent =
          sandbox.state === "off"
            ? `Commands run unsandboxed, with the server's own rights. ${sandbox.warning ?? ""}`
            : `Commands cannot run: the sandbox is unavailable here. ${sandbox.warning ?? ""}`;
        banner.hidden = false;
      } else banner.hidden = true;
    },
    () => {},
  );
}

/** The page: a tree pane, a main area showing the route's view, and a live watch of the tree. */
function start(): void {
  let revision = 0;
  const api = createApi({
    token: storedToken,
    askToken,
    onRevision: (rev) => {
      if (rev > revision) revision = rev;
    },
  });
  const main = byId("main");
  const treePane = createTreePane(api, byId("tree-pane"));
  const approvals = createApprovalsPanel(api, byId("approvals"));
  approvals.reload();
  showWorkspace(api);
  let view: View | null = null;
  /** The address of the view on screen. */
  let shownPath = "";

  function navigate(route: Route, push = true): void {
    const url = routeUrl(route);
    if (push && url !== location.pathname + location.search) history.pushState(null, "", url);
    // the same address keeps its query (the runs list's filters)
    else if (!push) {
      const same = new URL(url, location.href).pathname === location.pathname;
      history.replaceState(null, "", same ? location.pathname + location.search : url);
    }
    render(route, push);
  }

  function render(route: Route, moveFocus = true): void {
    shownPath = routeUrl(route);
    switch (route.view) {
      case "overview":
        view = createOverviewView(api);
        document.title = "Overview — byteseek";
        break;
      case "tree":
        view = createNodeView(api, route.key, navigate);
        void treePane.reveal(route.key);
        document.title = `${route.key} — byteseek`;
        break;
      case "tools":
        view = createToolsView(api, navigate);
        document.title = "Tools — byteseek";
        break;
      case "tool":
        view = createToolView(api, route.name);
        document.title = `${route.name} — byteseek`;
        break;
      case "runs":
        view = route.vid ? createRunView(api, route.vid) : createRunsView(api);
        document.title = route.vid ? `Run ${route.vid} — byteseek` : "Runs — byteseek";
        break;
      case "agent":
        view = createChatView(api, route.vid);
        document.title = "Agent — byteseek";
        break;
    }
    // the overview shows the approvals itself: the panel above every view steps aside (style.css)
    document.body.dataset.view = route.view;
    for (const a of document.querySelectorAll<HTMLAnchorElement>("#top-nav a"))
      a.setAttribute("aria-current", String(a.dataset.view === navSection(route)));
    replace(main, view.el);
    // After a navigation, focus moves to the new content so keyboard and screen-reader users land
    // on it; on the first load it stays at the top (the skip link comes first).
    if (moveFocus) main.focus({ preventScroll: true });
  }

  // Same-origin links to the page's own routes navigate without reloading.
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest?.("a");
    if (!a || a.target || a.origin !== location.origin) return;
    if (!/^\/(ui|tools|runs|agent)(\/|$)|^\/$/.test(a.pathname)) return;
    e.preventDefault();
    navigate(parseRoute(a.pathname, "", a.search));
  });
  // Back and forward re-render; an in-page fragment (the skip link's #main) does not.
  window.addEventListener("popstate", () => {
    if (location.pathname + location.search !== shownPath)
      render(parseRoute(location.pathname, "", location.search));
  });

  createSearch(
    api,
    byId<HTMLFormElement>("search"),
    (route) => navigate(route),
    (el) => {
      view = { el };
      replace(main, el);
    },
  );
  // Substring search of keys and values, at the top of the tree pane.
  createKeySearch(createTreeOps(api), byId("tree-pane"), treePane.current, (el) => {
    view = { el };
    replace(main, el);
  });

  const live = byId("live");
  function showState(s: WatchState): void {
    const text =
      s.state === "live"
        ? "live"
        : s.state === "connecting"
          ? "connecting…"
          : s.state === "retrying"
            ? `reconnecting (${s.reason})`
            : "offline";
    live.dataset.state = s.state;
    if (live.textContent !== text) live.textContent = text;
    live.title = s.state === "live" ? `following changes, at revision ${s.rev}` : text;
  }

  const route = parseRoute(location.pathname, location.hash, location.search);
  // `#/key` links (the tree's, from when it was the landing page) are rewritten to its address.
  navigate(route, false);
  // Follow every change from the revision the first answers carried: nothing between is lost.
  void api
    .list("/", { limit: 1 })
    .catch(() => undefined)
    .then(() =>
      startWatch(api, "/", revision, {
        changes(changes) {
          treePane.onChanges(changes);
          view?.onChanges?.(changes);
          approvals.onChanges(changes);
          // the policy may turn the sandbox off or on: the banner follows it
          if (changes.some((c) => c.key === keys.policy)) showWorkspace(api);
        },
        relist() {
          treePane.reloadAll();
          view?.reload?.();
          approvals.reload();
          toast("The change history was compacted: the page re-read what it shows.");
        },
        state: showState,
      }),
    );
}

/** The top navigation's section a route belongs to. */
function navSection(route: Route): string {
  return route.view === "tree" || route.view === "agent" || route.view === "overview" || route.view === "runs"
    ? route.view
    : "tools";
}

// The page hides the no-script message once the app runs.
byId("noscript-note").hidden = true;
start();
