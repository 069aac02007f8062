import { printable } from "../../tools/catalogue/printable.js";
import type { Api } from "./api.js";
import { toast } from "./dialogs.js";
import { h } from "./dom.js";
import { createSchemaForm, type JsonSchema } from "./schema-form.js";

/** An upstream MCP server's question, as an approval entry or a turn's event carries it. */
export interface Elicitation {
  server: string;
  message: string;
  schema: Record<string, unknown>;
}

/**
 * The body of a card for an upstream's question: what it asks, its form, and Accept (the form's
 * content, which the server checks against the schema again) / Decline / Cancel. `done` is told
 * the action once the server took it. `where` names the place the card is drawn (`panel`, `chat`):
 * one question can show in two places of a page at once (the approvals panel above the agent's
 * conversation), and each form's labels must name its own fields.
 */
export function elicitationParts(
  api: Api,
  key: string,
  asked: Elicitation,
  done: (action: "accept" | "decline" | "cancel") => void,
  where: string,
): HTMLElement[] {
  const form = createSchemaForm(
    asked.schema as JsonSchema,
    `${where}-elicit-${key.replace(/[^a-z0-9]/gi, "-")}`,
  );
  const answer = (action: "accept" | "decline" | "cancel") => async (ev: Event) => {
    const actions = (ev.currentTarget as HTMLElement).closest(".actions");
    let content: ReturnType<typeof form.read> | undefined;
    if (action === "accept") {
      content = form.read();
      if (!content.ok) return toast(`The answer is not complete: ${content.error}`, "error");
    }
    for (const b of actions?.querySelectorAll("button") ?? []) b.disabled = true;
    // the call's result can arrive before this answer's response does: the card says what was sent
    const card = actions?.closest<HTMLElement>(".approval-inline");
    if (card) card.dataset.answering = action;
    try {
      await api.answer(
        key,
        content?.ok
          ? { action: "accept", content: content.value }
          : { action: action === "cancel" ? "cancel" : "decline" },
      );
      done(action);
    } catch (err) {
      toast(`Could not answer ${key}: ${(err as Error).message}`, "error");
      if (card) delete card.dataset.answering;
      for (const b of actions?.querySelectorAll("button") ?? []) b.disabled = false;
    }
  };
  return [
    h("p", { class: "question" }, printable(asked.message)),
    form.el,
    h(
      "div",
      { class: "actions" },
      h("button", { class: "primary", type: "button", onclick: answer("accept") }, "Accept"),
      h("button", { class: "danger", type: "button", onclick: answer("decline") }, "Decline"),
      h(
        "button",
        { type: "button", title: "Dismiss without answering", onclick: answer("cancel") },
        "Cancel",
      ),
    ),
  ];
}
