import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { indexedToolOf } from "../../tools/search/document.js";
import { createToolIndex, type IndexedTool } from "../../tools/search/index.js";
import { createLiveToolIndex } from "../../tools/search/live.js";
import { stem, tokenize } from "../../tools/search/tokenize.js";
import { openTree } from "../../tree/store-config.js";
import type { Tree } from "../../tree/types.js";

const tool = (name: string, description: string, extra: Partial<IndexedTool> = {}): IndexedTool => ({
  name,
  description,
  ...extra,
});

describe("tokenize", () => {
  it("splits dotted, snake and camel names into words", () => {
    expect(tokenize("edit.read list_issues getRepoContent HTTPServer")).toEqual([
      "edit",
      "read",
      "list",
      "issu",
      "get",
      "repo",
      "content",
      "http",
      "server",
    ]);
  });

  it("folds case and accents and drops stopwords", () => {
    expect(tokenize("The Café of Zoë")).toEqual(["cafe", "zoe"]);
  });

  it("stems English inflections to one word", () => {
    expect(stem("repositories")).toBe(stem("repository"));
    expect(stem("listing")).toBe(stem("lists"));
    expect(stem("created")).toBe(stem("creates"));
    expect(stem("running")).toBe("run");
  });

  it("indexes Chinese and Japanese by character and character pair, Korean syllables kept whole", () => {
    expect(tokenize("读取文件")).toEqual(["读", "读取", "取", "取文", "文", "文件", "件"]);
    expect(tokenize("ファイル")).toContain("ファ");
    expect(tokenize("파일 읽기")).toEqual(["파", "파일", "일", "읽", "읽기", "기"]);
  });
});

describe("tool index", () => {
  it("ranks the tool whose name and description match first", () => {
    const index = createToolIndex();
    index.upsert(tool("edit.read", "Read a file's lines from the workspace", { snippet: "read a file" }));
    index.upsert(tool("edit.write", "Write a new file in the workspace"));
    index.upsert(tool("gh.list_issues", "List issues in a GitHub repository", { server: "github" }));
    index.upsert(tool("gh.create_issue", "Open a new issue in a repository", { server: "github" }));
    expect(index.search("list the issues of a repo")[0]?.name).toBe("gh.list_issues");
    expect(index.search("read file")[0]).toEqual({
      name: "edit.read",
      score: expect.any(Number),
      snippet: "read a file",
    });
    expect(
      index
        .search("github")
        .map((h) => h.name)
        .sort(),
    ).toEqual(["gh.create_issue", "gh.list_issues"]);
  });

  it("finds a tool by its exact name first, whatever its description says", () => {
    const index = createToolIndex();
    index.upsert(tool("text.wc", "Counts words"));
    index.upsert(tool("text.count", "text wc: counts text wc wc wc"));
    expect(index.search("text.wc")[0]?.name).toBe("text.wc");
    expect(index.search("text_wc")[0]?.name).toBe("text.wc");
  });

  it("matches a query word that begins a longer word", () => {
    const index = createToolIndex();
    index.upsert(tool("gh.get_repository", "Get repository metadata"));
    index.upsert(tool("edit.read", "Read a file"));
    expect(index.search("repo").map((h) => h.name)).toEqual(["gh.get_repository"]);
  });

  it("finds Chinese descriptions from a Chinese query", () => {
    const index = createToolIndex();
    index.upsert(tool("fs.cat", "读取一个文件的全部内容"));
    index.upsert(tool("fs.rm", "删除一个文件"));
    index.upsert(tool("net.get", "下载一个网页"));
    expect(index.search("读取文件")[0]?.name).toBe("fs.cat");
    expect(index.search("删除")[0]?.name).toBe("fs.rm");
  });

  it("forgets a removed tool and re-reads a replaced one", () => {
    const index = createToolIndex();
    index.upsert(tool("a.one", "alpha beta"));
    index.upsert(tool("a.two", "gamma"));
    index.remove("a.one");
    expect(index.search("alpha")).toEqual([]);
    expect(index.size).toBe(1);
    index.upsert(tool("a.two", "delta"));
    expect(index.search("gamma")).toEqual([]);
    expect(index.search("delta").map((h) => h.name)).toEqual(["a.two"]);
  });

  it("answers only tools the filter accepts, up to the limit", () => {
    const index = createToolIndex();
    for (let i = 0; i < 30; i++) index.upsert(tool(`t.n${i}`, `common word ${i}`));
    expect(index.search("common", { limit: 5 })).toHaveLength(5);
    expect(index.search("common", { accept: (n) => n === "t.n7" }).map((h) => h.name)).toEqual(["t.n7"]);
    expect(index.search("the of and")).toEqual([]);
  });

  it("reads parameter names and descriptions of a stored declaration", () => {
    const doc = indexedToolOf("x.y", {
      name: "x.y",
      description: "Does y",
      params: { type: "object", properties: { owner: { type: "string", description: "account login" } } },
      impl: { kind: "mcp", server: "github", tool: "y" },
    });
    expect(doc?.params).toBe("owner account login");
    expect(doc?.server).toBe("github");
    expect(indexedToolOf("x.z", "not a declaration")).toBeUndefined();
  });
});

describe("live tool index", () => {
  let tree: Tree | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await tree?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    tree = undefined;
    dir = undefined;
  });

  const decl = (name: string, description: string) => ({
    kind: "json" as const,
    value: { name, description, params: { type: "object" }, impl: { kind: "builtin", ref: "edit.read" } },
  });

  it("indexes what is declared at start and follows writes, changes and removals on LevelDB", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "search-"));
    tree = await openTree({ backend: "classic", location: dir });
    await tree.set("/byteseek/tools/old.tool", decl("old.tool", "a kangaroo hops"));
    const live = createLiveToolIndex({ tree });
    await live.ready;
    expect(live.index.search("kangaroo").map((h) => h.name)).toEqual(["old.tool"]);

    const added = await tree.set("/byteseek/tools/new.tool", decl("new.tool", "a wombat digs"));
    await live.caughtUp(added.rev);
    expect(live.index.search("wombat").map((h) => h.name)).toEqual(["new.tool"]);

    const changed = await tree.set("/byteseek/tools/new.tool", decl("new.tool", "a platypus swims"));
    await live.caughtUp(changed.rev);
    expect(live.index.search("wombat")).toEqual([]);
    expect(live.index.search("platypus").map((h) => h.name)).toEqual(["new.tool"]);

    const gone = await tree.del("/byteseek/tools/old.tool");
    await live.caughtUp(gone.rev);
    expect(live.index.search("kangaroo")).toEqual([]);

    const wiped = await tree.deltree("/byteseek/tools/");
    await live.caughtUp(wiped.rev);
    expect(live.index.size).toBe(0);
    live.close();
  });
});
