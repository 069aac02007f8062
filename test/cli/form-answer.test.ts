import { describe, expect, it } from "vitest";
import { fieldPrompt, fieldValue, formFields, schemaCheck } from "../../cli/form-answer.js";
import { terminalQuestion } from "../../tools/gate/approval-wording.js";

const FORM = {
  type: "object",
  properties: {
    repo: { type: "string", title: "Repository" },
    count: { type: "integer", minimum: 1 },
    ratio: { type: "number" },
    draft: { type: "boolean", description: "Open as a draft" },
    colour: { type: "string", enum: ["red", "green"] },
    labels: { type: "array", items: { type: "string", enum: ["bug", "docs"] } },
  },
  required: ["repo", "colour"],
};

describe("an upstream's form filled in on a terminal", () => {
  it("asks each field with its type, whether it is required, its label and its choices", () => {
    expect(formFields(FORM).map(fieldPrompt)).toEqual([
      "  repo (string, required) Repository: ",
      "  count (integer): ",
      "  ratio (number): ",
      "  draft (boolean) Open as a draft: ",
      "  colour (one of red|green, required): ",
      "  labels (some of bug|docs): ",
    ]);
  });

  it("reads a line as its field's type, keeps what cannot be read for the schema to refuse, and leaves an empty line out", () => {
    const [repo, count, ratio, draft, , labels] = formFields(FORM);
    expect(fieldValue(repo!, " acme/site ")).toBe(" acme/site ");
    expect(fieldValue(repo!, "   ")).toBeUndefined();
    expect(fieldValue(count!, "12")).toBe(12);
    expect(fieldValue(count!, "twelve")).toBe("twelve");
    expect(fieldValue(ratio!, "0.5")).toBe(0.5);
    expect(fieldValue(draft!, "y")).toBe(true);
    expect(fieldValue(draft!, "No")).toBe(false);
    expect(fieldValue(draft!, "perhaps")).toBe("perhaps");
    expect(fieldValue(labels!, "bug, docs,")).toEqual(["bug", "docs"]);
  });

  it("checks the content against the form's schema, naming each field that does not fit", async () => {
    const check = schemaCheck(FORM);
    expect(await check({ repo: "a/b", colour: "red", count: 2, labels: ["bug"] })).toEqual([]);
    const problems = await check({ colour: "blue", count: 1.5, labels: ["wontfix"] });
    expect(problems.map((p) => p.field).sort()).toEqual(["/colour", "/count", "/labels/0", "/repo"]);
  });

  it("says in the one-key question whether accept is followed by a form", () => {
    const asked = { server: "gh", message: "Which?" };
    expect(terminalQuestion({ tool: "gh.x", elicitation: { ...asked, schema: FORM } })).toContain(
      "[y] accept (then fill in its form) · [n] decline · [c] cancel",
    );
    expect(
      terminalQuestion({
        tool: "gh.x",
        elicitation: { ...asked, schema: { type: "object", properties: {} } },
      }),
    ).toContain("[y] accept (an empty form) · [n] decline");
  });
});
