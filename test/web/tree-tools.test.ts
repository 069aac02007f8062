// The tree's power tools on the page (issue 37 item 4), in one browser against one server.
import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { int64, json, str } from "../../tree/index.js";
import { docsShot, removeDir, startServer, type TestServer, useBrowser } from "./harness.js";

let server: TestServer;
const browser = useBrowser();
/** One page for the file (its scripts load once); each case goes to its own address. */
let page: Page;
let errors: string[];
let close: () => Promise<void>;

beforeAll(async () => {
  server = await startServer();
  const opened = await browser.open(server.url);
  await opened.context.grantPermissions(["clipboard-read", "clipboard-write"]);
  ({ page, errors } = opened);
  close = () => opened.context.close();
});

afterAll(async () => {
  await close?.();
  await server?.close();
  if (server) await removeDir(server.dir);
});

/** The value at `key` as its JSON form, or undefined when there is none. */
async function valueAt(key: string): Promise<unknown> {
  const node = await server.tree.get(key);
  if (!node || node.kind === "index" || !("value" in node)) return undefined;
  const v = node.value.value;
  return typeof v === "bigint" ? v.toString() : v;
}

/** Opens `path` in the file's page, with no script errors left from the case before. */
async function openAt(path: string): Promise<void> {
  errors.length = 0;
  await page.goto(path);
}

describe("key search", () => {
  it("finds keys containing a text anywhere under a directory, and values with 'values too'", async () => {
    await server.tree.set("/srch/alpha/one", str("1"));
    await server.tree.set("/srch/beta/Alphabet", str("2"));
    await server.tree.set("/srch/gamma", str("the word alpha inside"));
    await server.tree.set("/elsewhere/alpha", str("out of scope"));
    await openAt("/ui/srch/");
    await page.locator("h1", { hasText: "/srch/" }).waitFor();
    await page.locator("#key-search-input").fill("alpha");
    expect(await page.locator("#key-search-scope").inputValue()).toBe("/srch/");
    await page.locator("#key-search-go").click();
    await page.locator("#key-search-status", { hasText: "3 matches" }).waitFor();
    const keys = await page
      .locator("#key-search-results a")
      .evaluateAll((as) => as.map((a) => a.getAttribute("data-key")));
    expect(keys.sort()).toEqual(["/srch/alpha/", "/srch/alpha/one", "/srch/beta/Alphabet"]);
    await page.locator("#key-search-values").check();
    await page.locator("#key-search-go").click();
    await page.locator("#key-search-results a[data-key='/srch/gamma']").waitFor();
    await page.locator("#key-search-results a[data-key='/srch/alpha/one']").click();
    await page.waitForURL("**/ui/srch/alpha/one");
    expect(errors).toEqual([]);
  });
});

describe("multi-select", () => {
  it("picks rows by click, shift-click and keyboard, and deletes them after a dialog naming the count", async () => {
    for (const n of ["a", "b", "c", "d", "e"]) await server.tree.set(`/bulk/${n}`, str(n));
    await server.tree.set("/bulk/sub/x", str("x"));
    await server.tree.set("/bulk/sub/y", str("y"));
    await openAt("/ui/bulk/");
    const box = (key: string) => page.locator(`input.row-select[data-key="${key}"]`);
    await box("/bulk/a").click();
    await box("/bulk/c").click({ modifiers: ["Shift"] });
    await page.locator(".bulk-count", { hasText: "3 selected" }).waitFor();
    await docsShot(page, "tree");
    // Shift+↓ from c extends the range from the anchor (c) to d; Escape clears; Ctrl+A takes all.
    await box("/bulk/c").focus();
    await page.keyboard.press("Shift+ArrowDown");
    await page.locator(".bulk-count", { hasText: "2 selected" }).waitFor();
    expect(await box("/bulk/d").isChecked()).toBe(true);
    await page.keyboard.press("Escape");
    await page.locator(".bulk-count", { hasText: "Select rows" }).waitFor();
    await page.keyboard.press("Control+a");
    await page.locator(".bulk-count", { hasText: "6 selected" }).waitFor();
    await box("/bulk/e").click();
    await page.locator(".bulk-count", { hasText: "5 selected" }).waitFor();
    await page.locator("#bulk-delete").click();
    const dialog = page.locator("#confirm-dialog");
    await dialog.locator("h2", { hasText: "Delete 5 keys?" }).waitFor();
    expect(await dialog.textContent()).toContain("4 values and 1 directory with everything under it");
    await dialog.getByRole("button", { name: "Delete 5" }).click();
    await page.locator("#toast", { hasText: "Deleted 5 keys" }).waitFor();
    expect(await server.tree.get("/bulk/a")).toBeUndefined();
    expect(await server.tree.get("/bulk/sub/x")).toBeUndefined();
    expect(await valueAt("/bulk/e")).toBe("e");
    // The listing follows the deletion live: one row is left.
    await page.locator("input.row-select").first().waitFor();
    // (a locator, not waitForFunction: the page's CSP refuses the eval its polling needs)
    await expect.poll(() => page.locator("input.row-select").count(), { timeout: 30_000 }).toBe(1);
    expect(errors).toEqual([]);
  });
});

describe("move and copy", () => {
  it("moves a subtree and a value into another directory in one go, renames one, and copies one", async () => {
    await server.tree.set("/mv/src/a", str("a"));
    await server.tree.set("/mv/src/sub/b", str("b"));
    await server.tree.set("/mv/other", int64(7));
    await server.tree.set("/mv/dest/keep", str("there before"));
    await openAt("/ui/mv/");
    const box = (key: string) => page.locator(`input.row-select[data-key="${key}"]`);
    const dialog = page.locator("#confirm-dialog");
    await box("/mv/src/").click();
    await box("/mv/other").click();
    await page.locator("#bulk-move").click();
    await dialog.locator("h2", { hasText: "Move 2 items" }).waitFor();
    await page.locator("#bulk-target").fill("/mv/dest/");
    await page.locator("#bulk-target-ok").click();
    await page.locator("#toast", { hasText: /^Moved 2 items \(\d+ keys\) to \/mv\/dest\/$/ }).waitFor();
    expect(await valueAt("/mv/dest/src/sub/b")).toBe("b");
    expect(await valueAt("/mv/dest/other")).toBe("7");
    expect(await server.tree.get("/mv/src/")).toBeUndefined();
    expect(await valueAt("/mv/dest/keep")).toBe("there before");
    // One key: the target is its new key; a taken one is refused until "overwrite" is ticked.
    await openAt("/ui/mv/dest/");
    await box("/mv/dest/other").click();
    await page.locator("#bulk-copy").click();
    await page.locator("#bulk-target").fill("/mv/dest/keep");
    await page.locator("#bulk-target-ok").click();
    await page.locator(".node .error", { hasText: "tick “overwrite”" }).waitFor();
    expect(await valueAt("/mv/dest/keep")).toBe("there before");
    await page.locator("#bulk-move").click();
    await page.locator("#bulk-target").fill("/mv/renamed");
    await page.locator("#bulk-target-ok").click();
    await page.locator("#toast", { hasText: "Moved 1 item (1 key) to /mv/renamed" }).waitFor();
    expect(await valueAt("/mv/renamed")).toBe("7");
    expect(await server.tree.get("/mv/dest/other")).toBeUndefined();
    // the browser logs the refused copy's 409; nothing else went wrong
    expect(errors.filter((e) => !e.includes("status of 409"))).toEqual([]);
  });
});

describe("bulk actions beyond the loaded rows", () => {
  it("picks all 301 entries of a directory with 100 loaded, and moves, copies and deletes every one, each in one revision", async () => {
    const N = 300;
    await server.tree.import(
      Array.from({ length: N }, (_, i) => ({
        key: `/many/k${String(i).padStart(3, "0")}`,
        kind: "char/utf8" as const,
        value: `v${i}`,
      })),
    );
    await server.tree.set("/many/sub/x", str("x"));
    const dialog = page.locator("#confirm-dialog");
    /** Ticks every loaded row of `dir`, then "Select all" of the whole directory. */
    const pickWhole = async (dir: string) => {
      await openAt(`/ui${dir}`);
      await page.locator("input.row-select").nth(99).waitFor();
      expect(await page.locator("input.row-select").count()).toBe(100);
      await page.locator("input.select-all").check();
      await page.locator(".bulk-count", { hasText: "100 selected" }).waitFor();
      await page.locator("#bulk-select-whole", { hasText: `Select all ${N + 1} in ${dir}` }).click();
      await page.locator(".bulk-count", { hasText: `All ${N + 1} entries of ${dir} selected` }).waitFor();
    };
    /** Every child of `dir`: how many, and the revisions that last wrote them. */
    const children = async (dir: string) => {
      const listed = (await server.tree.list(dir, { limit: 1000, values: false })).children;
      return { count: listed.length, revs: new Set(listed.map((c) => c.modRev)) };
    };

    await pickWhole("/many/");
    let before = server.tree.revision();
    await page.locator("#bulk-move").click();
    await dialog.locator("h2", { hasText: "Move everything in /many/" }).waitFor();
    await page.locator("#bulk-target").fill("/moved/");
    await page.locator("#bulk-target-ok").click();
    await page
      .locator("#toast", {
        hasText: `Moved everything in /many/ (${N + 2} keys) to /moved/ at revision ${before + 1}`,
      })
      .waitFor();
    expect(server.tree.revision()).toBe(before + 1);
    expect(await children("/moved/")).toEqual({ count: N + 1, revs: new Set([before + 1]) });
    expect(await valueAt("/moved/k299")).toBe("v299");
    expect(await valueAt("/moved/sub/x")).toBe("x");
    // the directory stays, empty
    expect((await children("/many/")).count).toBe(0);
    await page.locator("td", { hasText: "(empty)" }).waitFor();

    await pickWhole("/moved/");
    before = server.tree.revision();
    await page.locator("#bulk-copy").click();
    await page.locator("#bulk-target").fill("/copied/");
    await page.locator("#bulk-target-ok").click();
    await page
      .locator("#toast", { hasText: `Copied everything in /moved/ (${N + 2} keys) to /copied/` })
      .waitFor();
    expect(server.tree.revision()).toBe(before + 1);
    expect(await children("/copied/")).toEqual({ count: N + 1, revs: new Set([before + 1]) });
    expect((await children("/moved/")).count).toBe(N + 1);

    await pickWhole("/copied/");
    before = server.tree.revision();
    await page.locator("#bulk-delete").click();
    await dialog.locator("h2", { hasText: "Delete everything in /copied/?" }).waitFor();
    await dialog.getByRole("button", { name: "Delete everything" }).click();
    await page.locator("#toast", { hasText: `Deleted everything in /copied/ (${N + 2} keys)` }).waitFor();
    expect(server.tree.revision()).toBe(before + 1);
    expect((await children("/copied/")).count).toBe(0);
    expect(await server.tree.get("/copied/")).toMatchObject({ kind: "index" });
    expect(errors).toEqual([]);
  });
});

describe("import and export", () => {
  it("previews an import (new, changed with a diff, read-only needing force) and imports it", async () => {
    await server.tree.set("/imp/same", str("unchanged"));
    await server.tree.set("/imp/change", str("old text"));
    await server.tree.set("/imp/locked", str("locked"), { ro: true, force: true });
    const lines = [
      '{"key":"/imp/same","kind":"char/utf8","value":"unchanged"}',
      '{"key":"/imp/change","kind":"char/utf8","value":"new text"}',
      '{"key":"/imp/locked","kind":"char/utf8","value":"unlocked"}',
      '{"key":"/imp/big","kind":"int64","value":9223372036854775807}',
      "",
    ].join("\n");
    await openAt("/ui/imp/");
    await page.locator("#transfer summary").click();
    // A broken line is refused with where it is, before anything is read or written.
    await page.locator("#import-file").setInputFiles({
      name: "broken.ndjson",
      mimeType: "application/x-ndjson",
      buffer: Buffer.from('{"key":"/imp/x","kind":"char/utf8","value":"a"}\n{"key": "/imp/y",}\n'),
    });
    await page.locator("#import-error", { hasText: "line 2, column" }).waitFor();
    await page.locator("#import-file").setInputFiles({
      name: "change.ndjson",
      mimeType: "application/x-ndjson",
      buffer: Buffer.from(lines),
    });
    await page
      .locator("#import-summary", { hasText: "1 new, 2 changed, 1 unchanged, 1 read-only" })
      .waitFor();
    expect(await page.locator("#import-added").textContent()).toContain("9223372036854775807");
    await page.locator("#import-changed summary", { hasText: "/imp/change" }).click();
    expect(await page.locator("#import-changed pre.diff").first().textContent()).toContain(
      "- old text\n+ new text",
    );
    expect(await page.locator("#import-readonly").textContent()).toContain("/imp/locked");
    expect(await page.locator("#import-go").isDisabled()).toBe(true);
    expect(await valueAt("/imp/change")).toBe("old text");
    await page.locator("#import-force").check();
    await page.locator("#import-go").click();
    await page.locator(".import-preview", { hasText: "Imported 4 lines" }).waitFor();
    expect(await valueAt("/imp/change")).toBe("new text");
    expect(await valueAt("/imp/locked")).toBe("unlocked");
    expect(await valueAt("/imp/big")).toBe("9223372036854775807");
    expect(errors).toEqual([]);
  });

  it("exports a directory as an NDJSON download", async () => {
    await server.tree.set("/exp/one", str("1"));
    await server.tree.set("/exp/deep/two", int64(2n ** 60n));
    await openAt("/ui/exp/");
    await page.locator("#transfer summary").click();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.locator("#export-dir").click(),
    ]);
    expect(download.suggestedFilename()).toBe("exp.ndjson");
    const text = await readFile((await download.path()) as string, "utf8");
    const keys = text
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { key: string }).key);
    expect(keys).toEqual(["/exp/", "/exp/deep/", "/exp/deep/two", "/exp/one"]);
    expect(text).toContain(`"value":"${2n ** 60n}"`);
  });
});

describe("versions", () => {
  it("shows the diff between any two retained versions of a value", async () => {
    const key = "/byteseek/memory/note";
    for (const v of ["one\nsame", "two\nsame", "three\nsame"]) await server.tree.set(key, str(v));
    await openAt("/ui/byteseek/memory/note");
    await page.locator("#history summary").click();
    // Options: the current version, then the retained ones newest first (v2, v1).
    await page.locator("#diff-from").selectOption("2");
    await page.locator("#diff-to").selectOption("1");
    expect(await page.locator("#diff-from option:checked").textContent()).toMatch(/^version 1,/);
    await page.locator("#diff-compare").click();
    const diff = page.locator(".history-diff pre.diff");
    await diff.waitFor();
    expect(await diff.textContent()).toBe("- one\n+ two\n  same\n");
  });
});

describe("JSON tree editor", () => {
  it("refuses invalid JSON saying where, edits members as a tree, copies a member's path, and saves", async () => {
    await server.tree.set("/cfg/j", json({ a: 1, b: { c: [1, 2] } }));
    await openAt("/ui/cfg/j");
    // Text mode: a trailing comma and an integer past 2^53 are refused with their place.
    await page.locator("#value-input").fill('{"a": 1,\n "b": 2,}');
    await page.locator("#value-input-error", { hasText: "line 2, column 9" }).waitFor();
    expect(await page.locator("#save").isDisabled()).toBe(true);
    await page.locator("#value-input").fill('{"a": 9007199254740993}');
    await page.locator("#value-input-error", { hasText: "beyond 2^53" }).waitFor();
    await page.locator("#value-input-mode-tree").click();
    expect(await page.locator("#value-input-error").textContent()).toContain("fix it to open the tree");
    await page.locator("#value-input").fill('{"a": 1, "b": {"c": [1, 2]}}');
    // Tree mode: leaves edited in place; a bad number is refused with its path.
    await page.locator("#value-input-mode-tree").click();
    const a = page.getByLabel("Value of .a", { exact: true });
    await a.fill("x1");
    await page.locator("#value-input-error", { hasText: '.a: "x1" is not a JSON number' }).waitFor();
    expect(await page.locator("#save").isDisabled()).toBe(true);
    await a.fill("5");
    await page.getByLabel("Add a member to .b.c", { exact: true }).click();
    await page.getByLabel("Type of .b.c[2]", { exact: true }).selectOption("boolean");
    await page.getByLabel("Value of .b.c[2]", { exact: true }).check();
    await page.getByLabel("Add a member to .", { exact: true }).click();
    await page.getByLabel("Value of .new", { exact: true }).fill("hello");
    await page.getByLabel("Remove .b.c[0]", { exact: true }).click();
    await page.getByLabel("Copy the JSON path .b.c", { exact: true }).click();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(".b.c");
    await page.locator("#save").click();
    await page.locator("#toast", { hasText: "Saved /cfg/j" }).waitFor();
    expect(await valueAt("/cfg/j")).toEqual({ a: 5, b: { c: [2, true] }, new: "hello" });
    // The key's own copy-path button.
    await page.getByLabel("Copy the path /cfg/j", { exact: true }).click();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe("/cfg/j");
    expect(errors).toEqual([]);
  });
});
