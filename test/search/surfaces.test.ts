import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openTree } from "../../tree/index.js";
import { cliEnv, startCliServer, tempDirs } from "../cli/cli-server.js";
import { assertBuilt, runCli } from "../cli/run-cli.js";
import { declare } from "../tools/helpers.js";
import { describedTool } from "./fixtures.js";

const dirs = tempDirs("byteseek-search-cli-");
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
  await dirs.removeAll();
});
beforeAll(assertBuilt);

/** A person's declarations, written into a fresh store folder. */
async function storeWithTools(): Promise<{ store: string; workspace: string }> {
  const root = await dirs.make();
  const store = join(root, "data");
  const tree = await openTree({ backend: "classic", location: store });
  await declare(tree, describedTool("gh.list_issues", "List the issues of a GitHub repository"));
  await declare(tree, describedTool("gh.create_issue", "Open a new issue in a repository"));
  await declare(tree, describedTool("text.weather", "今日の天気を調べる"));
  await tree.close();
  return { store, workspace: root };
}

describe("tool search surfaces", () => {
  it("kvspace tools search prints ranked hits, name<TAB>score<TAB>snippet, on the embedded store", async () => {
    const { store, workspace } = await storeWithTools();
    const r = await runCli(["tools", "search", "list issues of a repository", "--limit", "2"], {
      env: cliEnv(store, { BYTESEEK_WORKSPACE: workspace }),
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    expect(lines).toHaveLength(2);
    expect(lines[0]?.[0]).toBe("gh.list_issues");
    expect(Number(lines[0]?.[1])).toBeGreaterThan(Number(lines[1]?.[1]));
    expect(lines[0]?.[2]).toBe("List the issues of a GitHub repository");
    const cjk = await runCli(["tools", "search", "天気"], {
      env: cliEnv(store, { BYTESEEK_WORKSPACE: workspace }),
    });
    expect(cjk.stdout.split("\t")[0]).toBe("text.weather");
  });

  it("kvspace tools search exits 1 on no match and 2 on a bad --limit", async () => {
    const { store, workspace } = await storeWithTools();
    const env = cliEnv(store, { BYTESEEK_WORKSPACE: workspace });
    const none = await runCli(["tools", "search", "zzyzx"], { env });
    expect(none.code).toBe(1);
    expect(none.stdout).toBe("");
    const bad = await runCli(["tools", "search", "issue", "--limit", "many"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--limit must be a whole number from 1 to 100");
  });

  it("GET /v1/tools?search= ranks the catalogue, and kvspace through the server prints the same", async () => {
    const { store, workspace } = await storeWithTools();
    const server = await startCliServer({ store, workspace, seed: true });
    closers.push(() => server.close());
    const res = await fetch(`${server.url}/v1/tools?search=${encodeURIComponent("open an issue")}&limit=3`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      tools: Array<{ name: string }>;
      search: { hits: Array<{ name: string }> };
    };
    expect(body.search.hits[0]?.name).toBe("gh.create_issue");
    expect(body.tools.map((t) => t.name)).toEqual(body.search.hits.map((h) => h.name));
    const bad = await fetch(`${server.url}/v1/tools?search=x&limit=0`);
    expect(bad.status).toBe(400);
    const remote = await runCli(["tools", "search", "open an issue", "--limit", "3"], {
      env: cliEnv(server.url),
    });
    expect(remote.code).toBe(0);
    expect(remote.stdout.split("\t")[0]).toBe("gh.create_issue");
  });

  it("a declaration written through the server is found by the next search", async () => {
    const { store, workspace } = await storeWithTools();
    const server = await startCliServer({ store, workspace, seed: true });
    closers.push(() => server.close());
    const put = await fetch(`${server.url}/v1/tree/byteseek/tools/fx.convert`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        kind: "json",
        value: {
          name: "fx.convert",
          description: "Convert currencies at today's rate",
          params: { type: "object" },
          impl: { kind: "shell", argv: ["true"] },
        },
      }),
    });
    expect(put.status).toBeLessThan(300);
    const res = await fetch(`${server.url}/v1/tools?search=currencies`);
    const body = (await res.json()) as { search: { hits: Array<{ name: string }> } };
    expect(body.search.hits.map((h) => h.name)).toEqual(["fx.convert"]);
  });
});
