/**
 * The review part of a tool's page: what the tool is and does (kind, command / URL / upstream, who
 * owns it, its hash and acceptance, confirm / enabled and whether calls need approval, what the
 * policy denies), the diff of its declaration's last change, and a person's three decisions —
 * Accept, Require approval, Disable — each a real write of the person's credential that the page
 * then shows from the tree.
 */
import { printable } from "../../tools/catalogue/printable.js";
import { type Api, ApiError, type HistoryEntry, type JsonValue, type ValueNode } from "./api.js";
import { toast } from "./dialogs.js";
import { diffLines } from "./diff.js";
import { formatTime, h } from "./dom.js";
import { routeUrl } from "./keys.js";
import { toolFacts } from "./tool-facts.js";
import { errorText, type ToolEntry } from "./tool-parts.js";
import { type UpstreamPin, upstreamPinText } from "./upstream-pin.js";
import { diffBlock } from "./view-parts.js";

export interface ReviewInput {
  entry: ToolEntry;
  /** The declaration as stored (its value, version, writer). */
  node: ValueNode | undefined;
  /** Its retained previous versions, newest first. */
  history: HistoryEntry[];
  /** An `mcp` tool's upstream pin (upstream-pin.ts). */
  upstream?: UpstreamPin;
}

type Obj = { [k: string]: JsonValue };
const isObj = (v: JsonValue | undefined): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A word of a command line as a person would type it: quoted only when it must be. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./{}-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** What the tool runs, from its declaration's impl: one line (placeholders shown as written). */
export function runsText(impl: JsonValue | undefined): string {
  if (!isObj(impl)) return "?";
  const s = (v: JsonValue | undefined) => (typeof v === "string" ? v : JSON.stringify(v ?? null));
  switch (impl.kind) {
    case "shell": {
      const argv = Array.isArray(impl.argv) ? impl.argv.map((a) => shellWord(s(a))).join(" ") : "?";
      return `${argv}${impl.cwd !== undefined ? ` (in ${s(impl.cwd)})` : ""}`;
    }
    case "http":
      return `${s(impl.method ?? "POST")} ${s(impl.url)}`;
    case "mcp":
      return `MCP server "${s(impl.server)}", tool "${s(impl.tool)}"`;
    case "llm":
      return `the model, with the prompt ${s(impl.prompt)}`;
    case "builtin":
      return `built-in ${s(impl.ref)}`;
    default:
      return s(impl.kind);
  }
}

const KIND_TEXT: Record<string, string> = {
  builtin: "builtin (a function shipped with byteseek)",
  alias: "alias (a built-in under another name)",
  shell: "shell (a command, without a shell)",
  http: "http (a JSON request)",
  llm: "llm (a sub-call of the model)",
  mcp: "mcp (a tool of an upstream MCP server)",
  invalid: "invalid declaration",
};

/** The review section; `changed()` is called after a write so the page re-reads the tool. */
export function reviewSection(api: Api, input: ReviewInput, changed: () => void): HTMLElement {
  const { entry, node, history, upstream } = input;
  const facts = toolFacts(entry);
  const t = entry.tool;
  const decl = node && isObj(node.value) ? node.value : undefined;

  async function write(what: string, change: Obj): Promise<void> {
    try {
      // from the version on screen: a change made meanwhile is refused (412), not overwritten
      if (!node || !decl) throw new Error("the declaration is not a json value");
      await api.put(entry.key, { kind: "json", value: { ...decl, ...change } }, { ifMatch: node.version });
      toast(`${entry.name}: ${what}`);
    } catch (err) {
      toast(
        err instanceof ApiError && err.status === 412
          ? `${entry.name} changed meanwhile: the page shows it now; decide again`
          : `Could not change ${entry.name}: ${errorText(err)}`,
        "error",
      );
    }
    changed();
  }

  async function accept(button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await api.acceptTool(entry.name, t?.hash ?? "");
      toast(`Accepted ${entry.name}: every run is offered it`);
    } catch (err) {
      toast(`Could not accept ${entry.name}: ${errorText(err)}`, "error");
    }
    changed();
  }

  const button = (id: string, text: string, onClick: (b: HTMLButtonElement) => void, primary = false) => {
    const b = h("button", { type: "button", id, class: primary ? "primary" : null }, text);
    b.addEventListener("click", () => {
      b.disabled = true;
      onClick(b);
    });
    return b;
  };

  const confirm = decl?.confirm === true;
  const enabled = decl?.enabled !== false;
  const notAccepted = t?.hash !== undefined && t.accepted !== true;
  const actions = h(
    "div",
    { class: "actions", id: "review-actions" },
    notAccepted && t?.hash
      ? button("accept-tool", "Accept for every run", (b) => void accept(b), true)
      : null,
    decl
      ? confirm
        ? button(
            "confirm-off",
            "Stop requiring approval",
            () => void write("calls no longer need approval", { confirm: false }),
          )
        : button(
            "confirm-on",
            "Require approval",
            () => void write("every call now needs a person's approval", { confirm: true }),
          )
      : null,
    decl
      ? enabled
        ? button("disable-tool", "Disable", () => void write("switched off", { enabled: false }))
        : button("enable-tool", "Enable", () => void write("switched on", { enabled: true }))
      : null,
  );

  const owner = facts.owner.person
    ? h("dd", { id: "tool-owner" }, "a person")
    : h(
        "dd",
        { id: "tool-owner" },
        "run ",
        h("a", { href: routeUrl({ view: "runs", vid: facts.owner.vid }) }, printable(facts.owner.vid)),
        " (an agent declared it)",
      );
  const row = (label: string, value: Node | string, id?: string) => [
    h("dt", {}, label),
    typeof value === "string" ? h("dd", id ? { id } : {}, value) : value,
  ];
  const impl = decl?.impl;
  const facts_ = h(
    "dl",
    { class: "meta tool-facts", id: "tool-facts" },
    ...row("kind", KIND_TEXT[facts.kind] ?? facts.kind, "tool-kind"),
    ...row("runs", h("dd", { id: "tool-runs" }, h("code", {}, printable(runsText(impl))))),
    ...row("owner", owner),
    ...row(
      "declaration",
      h(
        "dd",
        {},
        h("a", { href: routeUrl({ view: "tree", key: entry.key }) }, entry.key),
        node ? ` · version ${node.version} · ${formatTime(node.mtime)}` : "",
      ),
    ),
    ...(t?.hash !== undefined
      ? row(
          "pinned hash",
          h(
            "dd",
            { id: "tool-hash" },
            h("code", {}, `sha256 ${t.hash.slice(0, 16)}`),
            t.accepted
              ? " · accepted by a person for every run"
              : " · not accepted: other runs are not offered it",
          ),
        )
      : []),
    ...(upstream ? row("upstream pin", upstreamPinText(upstream)) : []),
    ...(t?.held ? row("upstream", h("dd", { class: "problems" }, t.blocked ?? "held for review")) : []),
    ...row("confirm", confirm ? "true" : "false", "tool-confirm"),
    ...row("enabled", enabled ? "true" : "false", "tool-enabled"),
    ...row("needs approval", facts.approval ? `yes: ${facts.approval}` : "no", "tool-approval"),
    ...(t?.blocked !== undefined && !t.held && !notAccepted
      ? row("denied", h("dd", { class: "problems", id: "tool-denied" }, printable(t.blocked)))
      : []),
  );

  return h(
    "div",
    { id: "tool-review" },
    h(
      "p",
      { class: "tool-states" },
      ...facts.states.map((s) => h("span", { class: `kind-badge state-${s.replaceAll(" ", "-")}` }, s)),
    ),
    facts_,
    actions,
    facts.owner.person
      ? null
      : h(
          "p",
          { class: "muted" },
          "Require approval and Disable write the declaration as you: it becomes a person's tool (offered to every run, and floors no run can lower).",
        ),
    h("h2", {}, "Last change"),
    lastChange(node, history),
  );
}

/** The declaration's last change: the previous version against the current one, field by field as JSON lines. */
function lastChange(node: ValueNode | undefined, history: HistoryEntry[]): HTMLElement {
  if (!node) return h("p", { class: "muted" }, "The declaration is not stored.");
  const previous = history.find((e) => e.version !== node.version || e.modRev !== node.modRev);
  if (!previous)
    return h(
      "p",
      { class: "muted", id: "tool-diff" },
      node.version <= 1
        ? "First version: nothing changed since it was declared."
        : "No previous version is retained.",
    );
  const text = (v: JsonValue) => JSON.stringify(v, null, 2);
  return h(
    "div",
    { id: "tool-diff" },
    h(
      "p",
      { class: "meta" },
      `version ${previous.version}${previous.deleted ? " (deleted)" : ""} of ${formatTime(previous.mtime)} → version ${node.version} of ${formatTime(node.mtime)}`,
    ),
    diffBlock(diffLines(text(previous.value), text(node.value))),
  );
}
