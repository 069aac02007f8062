import { printable } from "../../tools/catalogue/printable.js";
import type { Api } from "./api.js";
import { toast } from "./dialogs.js";
import { formatTime, h, replace } from "./dom.js";
import type { McpReviewJson } from "./wire.js";

const WHY: Record<string, string> = {
  changed: "changed since it was accepted",
  "re-added": "dropped and re-added upstream",
  new: "new upstream since the first sync",
};

/**
 * One server's upstream tools held for review (tools/mcp/pins.ts): per tool why it is held, its hash
 * against the one accepted, the diff of each changed field, and Accept — which accepts the very
 * version shown (its hash goes with the request: a tool that changed again meanwhile is refused, 409).
 * Also the pins dropped because their tools left upstream.
 */
export function createHeldView(api: Api, server: string, onAccepted: () => void): HTMLElement {
  const el = h(
    "div",
    { class: "mcp-held", "data-held-server": server },
    h("p", { class: "muted" }, "loading the review…"),
  );

  async function accept(tool: string, hash: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const done = await api.mcpAccept(server, [tool], { [tool]: hash });
      toast(`Accepted ${done.accepted.join(", ")}: offered and callable again`);
    } catch (err) {
      toast(`Could not accept ${tool}: ${(err as Error).message}`, "error");
    }
    onAccepted();
  }

  function render(review: McpReviewJson): void {
    replace(
      el,
      review.held.length ? h("h4", {}, `Held for review (${review.held.length})`) : null,
      ...review.held.map(function heldTool(t) {
        const button = h(
          "button",
          { class: "primary", type: "button", "data-accept": t.name },
          "Accept",
        ) as HTMLButtonElement;
        button.addEventListener("click", () => void accept(t.tool, t.hash, button));
        return h(
          "article",
          { class: "held", "data-held": t.name },
          h("h5", {}, printable(`${t.name} — ${WHY[t.why] ?? t.why}`)),
          h(
            "p",
            { class: "meta" },
            printable(
              `upstream sha256 ${t.hash.slice(0, 12)} · ${t.accepted ? `accepted ${t.accepted.slice(0, 12)}${t.acceptedBy ? ` by ${t.acceptedBy}` : ""}` : "never accepted"} · held since ${formatTime(t.since)} · changed: ${t.fields.join(", ") || "nothing"}`,
            ),
          ),
          t.diff ? h("pre", { class: "diff" }, printable(t.diff, { lines: true })) : null,
          h("div", { class: "actions" }, button),
        );
      }),
      ...review.gone.map((g) =>
        h(
          "p",
          { class: "muted", "data-gone": g.name },
          printable(
            `${g.name} left upstream: its pin ${g.accepted.slice(0, 12)} was dropped (held for review if it comes back)`,
          ),
        ),
      ),
    );
  }

  api
    .mcpReview(server)
    .then(render, (err: unknown) =>
      replace(el, h("p", { class: "error" }, `GET /v1/mcp/${server}/review: ${(err as Error).message}`)),
    );
  return el;
}
