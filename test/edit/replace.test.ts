import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compactDiff } from "../../tools/edit/compact-diff.js";
import { createReplaceTool } from "../../tools/edit/index.js";
import { planEdits } from "../../tools/edit/plan-edits.js";
import { failure, makeWorkspace, type TestWorkspace, tempResidue } from "./workspace.js";

const replace = createReplaceTool();

describe("edit.replace", () => {
  let ws: TestWorkspace;
  const at = (name: string) => path.join(ws.root, name);
  const put = (name: string, data: string | Uint8Array) => writeFile(at(name), data);
  const bytes = (name: string) => readFile(at(name));
  /** Calls that must fail and leave the file byte for byte as it was. */
  async function failsUnchanged(args: Record<string, unknown>, code: Parameters<typeof failure>[1]) {
    const before = await bytes(String(args.path));
    const err = await failure(ws.call(replace, args), code);
    expect((await bytes(String(args.path))).equals(before)).toBe(true);
    return err;
  }
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it("replaces a unique match, changes no other byte and answers one line plus a compact diff", async () => {
    await put("f.ts", "const a = 1;\nconst b = 2;\nconst c = 3;\n");
    const r = await ws.call(replace, { path: "f.ts", old: "b = 2", new: "b = 20" });
    expect(await readFile(at("f.ts"), "utf8")).toBe("const a = 1;\nconst b = 20;\nconst c = 3;\n");
    const [first, ...diff] = r.text.split("\n");
    expect(first).toBe("Replaced 1 block in f.ts at line 2.");
    expect(diff).toContain("-const b = 2;");
    expect(diff).toContain("+const b = 20;");
    expect(diff).toContain("@@ -1,3 +1,3 @@");
    expect(await tempResidue(ws.root)).toEqual([]);
  });

  it("gives diff line numbers of the file, not of the excerpt", async () => {
    await put("f.txt", `${Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join("\n")}\n`);
    const r = await ws.call(replace, { path: "f.txt", old: "row 50\n", new: "row fifty\n" });
    expect(r.text).toContain("@@ -47,7 +47,7 @@");
  });

  it("writes $ patterns in new literally", async () => {
    await put("f.txt", "price\n");
    await ws.call(replace, { path: "f.txt", old: "price", new: "$& $1 $$ $'" });
    expect(await readFile(at("f.txt"), "utf8")).toBe("$& $1 $$ $'\n");
  });

  it("refuses text that is not there with not_found, listing near-matches", async () => {
    await put("f.ts", "function add(a, b) {\n  return a + b;\n}\n");
    const e = await failsUnchanged({ path: "f.ts", old: "function add(a, c) {", new: "x" }, "not_found");
    expect(e.message).toContain("line 1");
    expect(e.message).toContain("function add(a, b) {");
  });

  it.each([
    ["whitespace", "  return a + b;", "return  a +  b;", "whitespace"],
    ["tabs", "\treturn a + b;", "    return a + b;", "tabs versus spaces"],
    ["quotes", "say('hi');", "say(\u2018hi\u2019);", "quote characters"],
    ["line numbers", "alpha\nbeta", "1\talpha\n2\tbeta", "line numbers"],
  ])("hints when old differs only in %s", async (_what, inFile, old, hint) => {
    await put("f.txt", `head\n${inFile}\ntail\n`);
    const e = await failsUnchanged({ path: "f.txt", old, new: "z" }, "not_found");
    expect(e.message).toContain(hint);
    expect(e.details.candidates).toEqual([expect.objectContaining({ line: 2 })]);
  });

  it("refuses a repeated match with ambiguous, saying how many and at which lines", async () => {
    await put("f.txt", "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    const e = await failsUnchanged({ path: "f.txt", old: "x = 1", new: "x = 9" }, "ambiguous");
    expect(e.message).toContain("3 times");
    expect(e.message).toContain("lines 1, 3, 5");
    expect(e.details).toMatchObject({ count: 3, lines: [1, 3, 5] });
  });

  it("counts overlapping occurrences", async () => {
    await put("f.txt", "aaa\n");
    const e = await failsUnchanged({ path: "f.txt", old: "aa", new: "b" }, "ambiguous");
    expect(e.details.count).toBe(2);
  });

  it("takes either old and new or edits, refusing both, neither, or old without new", async () => {
    await failure(
      ws.call(replace, { path: "f.txt", old: "a", new: "b", edits: [{ old: "c", new: "d" }] }),
      "invalid_args",
    );
    await failure(ws.call(replace, { path: "f.txt" }), "invalid_args");
    await failure(ws.call(replace, { path: "f.txt", old: "a" }), "invalid_args");
  });

  it("refuses old equal to new (no_change) and empty old (empty_old)", async () => {
    await put("f.txt", "same\n");
    await failsUnchanged({ path: "f.txt", old: "same", new: "same" }, "no_change");
    await failsUnchanged({ path: "f.txt", old: "", new: "x" }, "empty_old");
  });

  it("on dry shows the diff and the line and writes nothing", async () => {
    await put("f.txt", "a\nb\nc\n");
    const r = await ws.call(replace, { path: "f.txt", old: "b", new: "B", dry: true });
    expect(r.text).toMatch(/^Dry run: would replace 1 block in f.txt at line 2/);
    expect(r.text).toContain("+B");
    expect(await readFile(at("f.txt"), "utf8")).toBe("a\nb\nc\n");
    await failsUnchanged({ path: "f.txt", old: "zzz", new: "y", dry: true }, "not_found");
  });

  it("matches LF text in a CRLF file and writes new newlines as CRLF", async () => {
    await put("w.txt", "one\r\ntwo\r\nthree\r\n");
    await ws.call(replace, { path: "w.txt", old: "one\ntwo", new: "uno\ndos\ntres" });
    expect(await readFile(at("w.txt"), "utf8")).toBe("uno\r\ndos\r\ntres\r\nthree\r\n");
  });

  it("keeps every byte of mixed endings outside the replaced span", async () => {
    const before = "a\r\nb\nc\r\nd\ne\r\n";
    await put("m.txt", before);
    await ws.call(replace, { path: "m.txt", old: "c", new: "C" });
    expect(await readFile(at("m.txt"), "utf8")).toBe("a\r\nb\nC\r\nd\ne\r\n");
  });

  it("hides the BOM for matching and keeps it on write", async () => {
    await put("b.txt", "\uFEFFstart\nend\n");
    await ws.call(replace, { path: "b.txt", old: "start", new: "begin" });
    expect(await readFile(at("b.txt"), "utf8")).toBe("\uFEFFbegin\nend\n");
  });

  it("keeps tabs", async () => {
    await put("t.go", "func f() {\n\treturn 1\n}\n");
    await ws.call(replace, { path: "t.go", old: "\treturn 1", new: "\treturn 2" });
    expect(await readFile(at("t.go"), "utf8")).toBe("func f() {\n\treturn 2\n}\n");
  });

  it.each([
    ["Latin-1", Buffer.from("caf\xe9 au lait\n", "latin1"), "encoding"],
    ["Shift_JIS", Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x0a]), "encoding"],
    ["UTF-16", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("abc\n", "utf16le")]), "encoding"],
    ["NUL bytes", Buffer.from("ab\0cd\n"), "binary"],
  ] as const)("refuses %s text and leaves it untouched", async (_name, data, code) => {
    await put("x.txt", data);
    await failsUnchanged({ path: "x.txt", old: "a", new: "b" }, code);
  });

  it("refuses a read-only file (even on dry) with permission_denied", async () => {
    await put("ro.txt", "keep\n");
    await chmod(at("ro.txt"), 0o444);
    await failsUnchanged({ path: "ro.txt", old: "keep", new: "lose" }, "permission_denied");
    await failsUnchanged({ path: "ro.txt", old: "keep", new: "lose", dry: true }, "permission_denied");
  });

  it("keeps the file's mode", async () => {
    await put("x.sh", "echo 1\n");
    await chmod(at("x.sh"), 0o700);
    await ws.call(replace, { path: "x.sh", old: "1", new: "2" });
    expect((await stat(at("x.sh"))).mode & 0o7777).toBe(0o700);
  });

  it("refuses a missing file and a directory", async () => {
    await failure(ws.call(replace, { path: "nope.txt", old: "a", new: "b" }), "file_not_found");
    await mkdir(at("d"));
    await failure(ws.call(replace, { path: "d", old: "a", new: "b" }), "is_directory");
  });

  it("lands all of 32 concurrent replaces on one file", async () => {
    const names = Array.from({ length: 32 }, (_, i) => `item${String(i).padStart(2, "0")}`);
    await put("c.txt", `${names.map((n) => `${n} = old`).join("\n")}\n`);
    const results = await Promise.all(
      names.map((n) => ws.call(replace, { path: "c.txt", old: `${n} = old`, new: `${n} = new` })),
    );
    expect(results).toHaveLength(32);
    expect(await readFile(at("c.txt"), "utf8")).toBe(`${names.map((n) => `${n} = new`).join("\n")}\n`);
    expect(await tempResidue(ws.root)).toEqual([]);
  });
});

describe("edit.replace on files without CRLF (located on bytes)", () => {
  let ws: TestWorkspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  /** What planning on the decoded text answers: the line of the change and its compact diff. */
  function onText(text: string, old: string, nu: string) {
    const planned = planEdits(text, [{ old, new: nu }], "f.txt", () => "old");
    return { line: planned[0]!.line, diff: compactDiff("f.txt", text, planned) };
  }

  it("gives the same line, diff and bytes as the text path, wherever the match sits", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `línea ${i + 1} — ✓ ${"é".repeat(i % 5)}`);
    const bodies = [lines.join("\n"), `${lines.join("\n")}\n`, `\uFEFF${lines.join("\n")}\n`];
    for (const body of bodies) {
      for (const n of [1, 2, 4, 7, 8, 20, 33, 37, 40]) {
        const text = body.replace(/^\uFEFF/, "");
        const old = `línea ${n} — ✓`;
        const nu = `line ${n}\nsplit ✓`;
        await writeFile(path.join(ws.root, "f.txt"), body);
        const r = await ws.call(replace, { path: "f.txt", old, new: nu });
        const expected = onText(text, old, nu);
        expect(r.details).toMatchObject({ lines: [expected.line], diff: expected.diff });
        const bom = body.startsWith("\uFEFF") ? "\uFEFF" : "";
        expect(await readFile(path.join(ws.root, "f.txt"), "utf8")).toBe(bom + text.replace(old, nu));
      }
    }
  });

  it("matches at the very first byte and at the very last", async () => {
    await writeFile(path.join(ws.root, "f.txt"), "first\nmiddle\nlast");
    await ws.call(replace, { path: "f.txt", old: "first", new: "1st" });
    const r = await ws.call(replace, { path: "f.txt", old: "last", new: "final" });
    expect(await readFile(path.join(ws.root, "f.txt"), "utf8")).toBe("1st\nmiddle\nfinal");
    expect(r.text).toContain("\\ No newline at end of file");
  });

  it("keeps the messages of the text path for errors", async () => {
    await writeFile(path.join(ws.root, "f.txt"), "aé\naé\n");
    const e = await failure(ws.call(replace, { path: "f.txt", old: "aé", new: "b" }), "ambiguous");
    expect(e.message).toContain("lines 1, 2");
    await failure(ws.call(replace, { path: "f.txt", old: "\uD800", new: "b" }), "not_found");
  });
});
