import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createReadTool } from "../../tools/edit/index.js";
import { failure, makeWorkspace, type TestWorkspace } from "./workspace.js";

const read = createReadTool();
const lines = (n: number, f = (i: number) => `line ${i}`) =>
  `${Array.from({ length: n }, (_, i) => f(i + 1)).join("\n")}\n`;

describe("edit.read", () => {
  let ws: TestWorkspace;
  const put = (name: string, data: string | Uint8Array) => writeFile(path.join(ws.root, name), data);
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it("numbers lines as number TAB text", async () => {
    await put("f.txt", "alpha\nbeta\n");
    const r = await ws.call(read, { path: "f.txt" });
    expect(r.text).toBe("1\talpha\n2\tbeta");
    expect(r.details).toMatchObject({ lines: 2, from: 1, to: 2 });
  });

  it("starts at offset, stops at limit and says which offset continues", async () => {
    await put("f.txt", lines(10));
    const r = await ws.call(read, { path: "f.txt", offset: 3, limit: 2 });
    expect(r.text).toBe("3\tline 3\n4\tline 4\n[Showing lines 3-4 of 10. Use offset=5 to continue.]");
  });

  it("caps at 2000 lines and names the line count and next offset", async () => {
    await put(
      "f.txt",
      lines(2500, () => "x"),
    );
    const r = await ws.call(read, { path: "f.txt" });
    const rows = r.text.split("\n");
    expect(rows).toHaveLength(2001);
    expect(rows[2000]).toBe("[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]");
  });

  it("caps at 50 KB before 2000 lines", async () => {
    await put(
      "f.txt",
      lines(1000, () => "y".repeat(199)),
    );
    const r = await ws.call(read, { path: "f.txt" });
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(51 * 1024);
    expect(r.text).toMatch(/\[Showing lines 1-\d+ of 1000\. Use offset=\d+ to continue\.\]$/);
  });

  it("cuts a line longer than 2000 characters with a marker", async () => {
    await put("f.txt", `${"z".repeat(5000)}\nshort\n`);
    const r = await ws.call(read, { path: "f.txt" });
    expect(r.text).toContain(`1\t${"z".repeat(2000)}… [line cut: 5000 characters in all]`);
    expect(r.text).toContain("2\tshort");
  });

  it("refuses an offset past the end, naming the line count", async () => {
    await put("f.txt", lines(5));
    const e = await failure(ws.call(read, { path: "f.txt", offset: 9 }), "offset_out_of_range");
    expect(e.message).toContain("has 5 lines");
  });

  it("counts a negative offset from the end", async () => {
    await put("f.txt", lines(10));
    const r = await ws.call(read, { path: "f.txt", offset: -2 });
    expect(r.text).toBe("9\tline 9\n10\tline 10");
  });

  it("says when a file is empty", async () => {
    await put("e.txt", "");
    expect((await ws.call(read, { path: "e.txt" })).text).toBe("e.txt is empty (0 bytes).");
  });

  it("refuses a directory and a missing file", async () => {
    await mkdir(path.join(ws.root, "d"));
    await failure(ws.call(read, { path: "d" }), "is_directory");
    await failure(ws.call(read, { path: "nope.txt" }), "file_not_found");
  });

  it("hides a BOM and shows CRLF lines without the CR", async () => {
    await put("b.txt", "\uFEFFfirst\r\nsecond\r\n");
    expect((await ws.call(read, { path: "b.txt" })).text).toBe("1\tfirst\n2\tsecond");
  });

  it("shows tabs as they are", async () => {
    await put("t.txt", "\tindented\n");
    expect((await ws.call(read, { path: "t.txt" })).text).toBe("1\t\tindented");
  });

  it.each([
    ["Latin-1", Buffer.from("caf\xe9\n", "latin1"), "encoding"],
    ["Shift_JIS", Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x0a]), "encoding"],
    [
      "UTF-16LE with BOM",
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello\n", "utf16le")]),
      "encoding",
    ],
    ["UTF-16LE without BOM", Buffer.from("hello world\n", "utf16le"), "encoding"],
    ["NUL bytes", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x00, 0x00, 0x01, 0x61]), "binary"],
  ] as const)("refuses %s text", async (_name, bytes, code) => {
    await put("x.bin", bytes);
    const e = await failure(ws.call(read, { path: "x.bin" }), code);
    expect(e.message).toContain("x.bin");
  });

  it("reads a window at the end of a file too large to read whole, numbering from the end", async () => {
    await put("big.txt", `${`${"q".repeat(99)}\n`.repeat(200_000)}last one\n`);
    const r = await ws.call(read, { path: "big.txt", offset: -3 });
    const rows = r.text.split("\n");
    expect(rows[0]).toMatch(/too large to count/);
    expect(rows.slice(1)).toEqual([`-3\t${"q".repeat(99)}`, `-2\t${"q".repeat(99)}`, "-1\tlast one"]);
  });

  it("reads a window in the middle of a file too large to read whole, by line number", async () => {
    execFileSync("bash", ["-c", "seq -f 'line %.0f' 1 2000000 > big.txt"], { cwd: ws.root });
    const r = await ws.call(read, { path: "big.txt", offset: 1_500_000, limit: 2 });
    expect(r.text.split("\n").slice(0, 2)).toEqual(["1500000\tline 1500000", "1500001\tline 1500001"]);
    expect(r.text).toContain("Use offset=1500002 to continue.");
  });
});
