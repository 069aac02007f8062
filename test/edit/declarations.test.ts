import { describe, expect, it } from "vitest";
import { createEditTools } from "../../tools/edit/index.js";
import { createShellTools } from "../../tools/shell/index.js";

const tools = [...createEditTools(), ...createShellTools()];

describe("edit and shell declarations", () => {
  it("declares every tool of the family, with ref equal to the name", () => {
    expect(tools.map((t) => t.ref)).toEqual([
      "edit.read",
      "edit.write",
      "edit.replace",
      "edit.multi",
      "edit.grep",
      "edit.glob",
      "edit.ls",
      "edit.rename",
      "shell.run",
    ]);
    for (const t of tools) {
      expect(t.declaration.name).toBe(t.ref);
      expect(t.declaration.impl).toEqual({ kind: "builtin", ref: t.ref });
      expect(t.declaration.params).toMatchObject({ type: "object", properties: expect.any(Object) });
      expect(t.declaration.params).not.toHaveProperty("$schema");
      // edit.multi is edit.replace's edits under its older name: callable, never offered (no snippet)
      if (t.ref === "edit.multi") {
        expect(t.declaration.snippet).toBeUndefined();
        continue;
      }
      // One line for the prompt's tool list, which prefixes the name itself.
      expect(t.declaration.snippet).toMatch(/^[a-z][^\n]{5,100}$/);
      expect(t.declaration.snippet).not.toContain(t.ref);
      expect(t.declaration.guidelines?.length).toBeGreaterThan(0);
      expect(t.declaration.params).toMatchObject({ type: "object", properties: expect.any(Object) });
      expect(t.declaration.params).not.toHaveProperty("$schema");
    }
  });

  it("switches on read, write, replace, multi and shell.run; declares grep, glob, ls, rename off", () => {
    const on = tools.filter((t) => t.declaration.enabled).map((t) => t.ref);
    expect(on).toEqual(["edit.read", "edit.write", "edit.replace", "edit.multi", "shell.run"]);
  });

  it("describes each parameter for the model", () => {
    const replace = tools.find((t) => t.ref === "edit.replace")!;
    const props = replace.declaration.params.properties as Record<string, { description?: string }>;
    expect(Object.keys(props)).toEqual(["path", "old", "new", "edits", "dry"]);
    for (const p of Object.values(props)) expect(p.description).toBeTruthy();
    expect(replace.declaration.params.required).toEqual(["path"]);
  });
});
