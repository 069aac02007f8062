import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultToolList, isFileTool, PI_FILE_TOOL_BYTES, schemaBytes } from "../../bench/schema-bytes.js";
import { createByteseek } from "../../compose/byteseek.js";
import { type Json, json, openTree } from "../../tree/index.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "byteseek-default-tools-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("the default tool list", () => {
  it("offers the file tools in no more schema bytes than pi's read, write and edit", async () => {
    const tools = await defaultToolList(dir);
    expect(tools.filter(isFileTool).map((t) => t.name)).toEqual(["edit.read", "edit.replace", "edit.write"]);
    expect(schemaBytes(tools.filter(isFileTool))).toBeLessThanOrEqual(PI_FILE_TOOL_BYTES);
  });

  it("still runs edit.multi and edit.replace's one-edit shape by name, though only edit.replace is offered", async () => {
    const tree = await openTree({ backend: "memory" });
    const bs = await createByteseek({ tree, workspace: dir, logger: pino({ level: "silent" }), env: {} });
    try {
      await writeFile(join(dir, "f.txt"), "one\ntwo\nthree\n");
      const multi = await bs.runtime.call(
        "edit.multi",
        {
          path: "f.txt",
          edits: [
            { old: "one", new: "1" },
            { old: "three", new: "3" },
          ],
        },
        { vid: "r1" },
      );
      expect(multi.kind).toBe("ok");
      const single = await bs.runtime.call(
        "edit.replace",
        { path: "f.txt", old: "two", new: "2" },
        { vid: "r1" },
      );
      expect(single.kind).toBe("ok");
      const several = await bs.runtime.call(
        "edit.replace",
        {
          path: "f.txt",
          edits: [
            { old: "1", new: "uno" },
            { old: "3", new: "tres" },
          ],
        },
        { vid: "r1" },
      );
      expect(several.kind).toBe("ok");
      expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("uno\n2\ntres\n");
    } finally {
      await bs.close();
      await tree.close();
    }
  });

  it("names the workspace when a path does not exist, and suggests only the tools the run is offered", async () => {
    const tree = await openTree({ backend: "memory" });
    const bs = await createByteseek({ tree, workspace: dir, logger: pino({ level: "silent" }), env: {} });
    try {
      const real = await realpath(dir);
      const read = await bs.runtime.call("edit.read", { path: "README.md" }, { vid: "r1" });
      // edit.ls and edit.glob are shipped switched off: not suggested
      expect(read.text).toBe(`README.md does not exist in the workspace ${real} (paths are relative to it).`);
      const edit = await bs.runtime.call(
        "edit.replace",
        { path: "gone.txt", old: "a", new: "b" },
        { vid: "r1" },
      );
      expect(edit.text).toBe(
        `gone.txt does not exist in the workspace ${real} (paths are relative to it). To create a new file use edit.write.`,
      );
      for (const name of ["edit.ls", "edit.glob"]) {
        const key = `/byteseek/tools/${name}`;
        const node = await tree.get(key);
        const decl = node?.kind === "json" ? (node.value.value as Record<string, unknown>) : {};
        await tree.set(key, json({ ...decl, enabled: true } as Json));
      }
      const again = await bs.runtime.call("edit.read", { path: "README.md" }, { vid: "r1" });
      expect(again.text).toBe(
        `README.md does not exist in the workspace ${real} (paths are relative to it). Check the path with edit.ls or edit.glob.`,
      );
      expect(again.details).toMatchObject({ code: "file_not_found", path: "README.md" });
    } finally {
      await bs.close();
      await tree.close();
    }
  });
});
