import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { declare, type Harness, harness } from "./helpers.js";

describe("shell impl arguments stay arguments", () => {
  let h: Harness;
  let outside: string;
  beforeEach(async () => {
    h = await harness("memory");
    // a sibling of the workspace: nothing may be written here
    outside = join(h.workspace, "..", `outside-${process.pid}-${Date.now()}`);
    await mkdir(outside);
    await writeFile(join(h.workspace, "list.txt"), "b\na\n");
  });
  afterEach(async () => {
    await import("node:fs/promises").then((fs) => fs.rm(outside, { recursive: true, force: true }));
    await h.dispose();
  });

  const sortTool = (file: Record<string, unknown>) => ({
    name: "text.sort",
    description: "sorts a file",
    params: { type: "object", properties: { file }, required: ["file"] },
    impl: { kind: "shell", argv: ["sort", "{file}"] },
  });

  it("refuses a value that begins with - where the program would read it as an option (kind arg)", async () => {
    await declare(h.tree, sortTool({ type: "string" }));
    const target = join(outside, "x");
    const r = await h.runtime.call("text.sort", { file: `-o${target}` }, { vid: "inject" });
    expect(r.kind, r.text).toBe("arg");
    expect(r.details.code).toBe("invalid_args");
    expect(r.text).toContain('file may not begin with "-"');
    expect(existsSync(target)).toBe(false);
    const ok = await h.runtime.call("text.sort", { file: "list.txt" }, { vid: "inject" });
    expect(ok.text).toBe("a\nb\n");
  });

  it("lets a parameter whose schema says allowOptions: true pass an option", async () => {
    await declare(h.tree, {
      name: "text.sortby",
      description: "sorts with a flag",
      params: {
        type: "object",
        properties: {
          flag: { type: "string", enum: ["-r", "-n"], allowOptions: true },
          file: { type: "string" },
        },
        required: ["flag", "file"],
      },
      impl: { kind: "shell", argv: ["sort", "{flag}", "{file}"] },
    });
    const r = await h.runtime.call("text.sortby", { flag: "-r", file: "list.txt" }, { vid: "inject" });
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toBe("b\na\n");
  });

  it("checks an element made of several placeholders by what it starts with", async () => {
    await declare(h.tree, {
      name: "text.joined",
      description: "two values in one argument",
      params: { type: "object", properties: { a: { type: "string" }, b: { type: "string" } } },
      impl: { kind: "shell", argv: ["echo", "{a}{b}"] },
    });
    const r = await h.runtime.call("text.joined", { a: "", b: "-e" }, { vid: "inject" });
    expect(r.kind).toBe("arg");
    expect(r.text).toContain('b may not begin with "-"');
  });

  it("checks a format: path parameter against the workspace like the edit tools' paths", async () => {
    await declare(h.tree, sortTool({ type: "string", format: "path" }));
    await writeFile(join(outside, "secret.txt"), "s3cret\n");
    for (const file of [
      join(outside, "secret.txt"),
      `../${join(outside.split("/").at(-1)!, "secret.txt")}`,
      "/etc/passwd",
    ]) {
      const r = await h.runtime.call("text.sort", { file }, { vid: "inject" });
      expect(r.kind, `${file}: ${r.text}`).toBe("denied");
      expect(r.details.code).toBe("outside_root");
      expect(r.text).not.toContain("s3cret");
    }
    const inside = await h.runtime.call("text.sort", { file: "list.txt" }, { vid: "inject" });
    expect(inside.kind, inside.text).toBe("ok");
  });

  it("resolves a path parameter from the declaration's cwd", async () => {
    await mkdir(join(h.workspace, "sub"));
    await declare(h.tree, {
      ...sortTool({ type: "string", format: "path" }),
      impl: { kind: "shell", argv: ["sort", "{file}"], cwd: "sub" },
    });
    const r = await h.runtime.call("text.sort", { file: "../../x" }, { vid: "inject" });
    expect(r.kind).toBe("denied");
    const ok = await h.runtime.call("text.sort", { file: "../list.txt" }, { vid: "inject" });
    expect(ok.kind, ok.text).toBe("ok");
  });
});
