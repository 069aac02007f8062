// Over 400 lines: the page end to end in one browser against one server, started once for all its cases.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bool, int64, json, str } from "../../tree/index.js";
import { ARTIFACTS, removeDir, screenshot, startServer, type TestServer, useBrowser } from "./harness.js";
import { createWriter, type Writer } from "./writer.js";

let server: TestServer;

const browser = useBrowser();
let writer: Writer;
const shots: string[] = [];

beforeAll(async () => {
  server = await startServer();
  writer = await createWriter(server.url);
  console.log(
    `web e2e: concurrent writes go through ${writer.via === "cli" ? "the kvspace CLI (KVSPACE=http://…)" : "the HTTP API (dist/ is not built)"}`,
  );
});

afterAll(async () => {
  await server?.close();
  if (server) await removeDir(server.dir);
  console.log(`web e2e: screenshots in ${ARTIFACTS}:\n  ${shots.join("\n  ")}`);
});

async function shot(page: Page, name: string) {
  shots.push(await screenshot(page, name));
}

/** Waits until the page's live indicator says it follows the watch stream. */
async function waitLive(page: Page) {
  await page.locator('#live[data-state="live"]').waitFor();
}

describe("the page is served by byteseek", () => {
  it("answers / and deep links with the page, and its scripts and styles from /assets", async () => {
    for (const path of ["/", "/ui/", "/ui/byteseek/tools/", "/tools/", "/runs/cli"]) {
      const res = await fetch(server.url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/text\/html/);
      expect(res.headers.get("content-security-policy")).toContain("connect-src 'self'");
      expect(await res.text()).toContain('<script type="module" src="/assets/web/src/main.js">');
    }
    const js = await fetch(`${server.url}/assets/web/src/main.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    // The event-stream parser and the key map the page shares with the Node side are served beside its scripts.
    expect((await fetch(`${server.url}/assets/shared/sse.js`)).status).toBe(200);
    expect((await fetch(`${server.url}/assets/shared/keys.js`)).status).toBe(200);
    const css = await fetch(`${server.url}/assets/style.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/text\/css/);
    expect((await fetch(`${server.url}/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/..%2Fpackage.json`)).status).toBeGreaterThanOrEqual(400);
  });
});

describe("browse", () => {
  it("opens a deep link to a value, with its ancestors open in the tree and the metadata shown", async () => {
    await server.tree.set("/docs/guide/intro", str("Hello from byteseek.\nSecond line."));
    await server.tree.set("/docs/guide/n", int64(7));
    const { page, context, requests, errors } = await browser.open(server.url);
    await page.goto("/ui/docs/guide/intro");
    await page.locator("h1", { hasText: "/docs/guide/intro" }).waitFor();
    expect(await page.locator("#value-input").inputValue()).toBe("Hello from byteseek.\nSecond line.");
    const meta = await page.locator("dl.meta").textContent();
    expect(meta).toContain("kindchar/utf8");
    expect(meta).toContain("version1");
    // The tree pane opened /docs/ and /docs/guide/ and marks the node.
    await page.locator('#tree-pane a[aria-current="page"]', { hasText: "intro" }).waitFor();
    await page.locator('#tree-pane a[data-key="/docs/guide/n"]').waitFor();
    // The breadcrumb leads back up.
    await page.locator(".breadcrumb a", { hasText: "guide/" }).click();
    await page.waitForURL("**/ui/docs/guide/");
    await page.locator("table.listing td", { hasText: "Hello from byteseek." }).waitFor();
    await page.locator(".dir-meta dl.meta", { hasText: "entries2" }).waitFor();
    await waitLive(page);
    await shot(page, "browse-directory");
    // A hash link (`/#/key`) opens the same node under its canonical address.
    await page.goto("/#/docs/guide/n");
    await page.waitForURL("**/ui/docs/guide/n");
    expect(await page.locator("#value-input").inputValue()).toBe("7");
    expect(requests.every((u) => u.startsWith(server.url))).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a read-only value without a Save button, naming the CLI command that changes it", async () => {
    await server.tree.set("/byteseek/policy", json({ deny: [] }), { ro: true, force: true });
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/byteseek/policy");
    const note = page.locator("#ro-note");
    await note.waitFor();
    expect(await note.textContent()).toContain(
      "kvspace set /byteseek/policy 'json:…' ro --force (docs/TOOLS.md, “Changing the policy”).",
    );
    expect(await page.locator("#save").count()).toBe(0);
    await context.close();
  });

  it("opens keys with spaces, '?', '#' and non-ASCII names through percent-encoded links", async () => {
    const key = "/odd/héllo wörld?#1";
    await server.tree.set(key, str("odd"));
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/odd/");
    await page.locator("table.listing a", { hasText: "héllo wörld?#1" }).click();
    await page.locator("h1", { hasText: key }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/ui/odd/h%C3%A9llo%20w%C3%B6rld%3F%231");
    await page.reload();
    expect(await page.locator("#value-input").inputValue()).toBe("odd");
    await context.close();
  });

  it("finds keys by prefix from the search box and opens them by keyboard", async () => {
    await server.tree.set("/find/alpha", str("a"));
    await server.tree.set("/find/alps", str("b"));
    await server.tree.set("/find/beta", str("c"));
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/");
    await page.locator("h1", { hasText: "/" }).waitFor();
    await page.keyboard.press("/");
    await page.keyboard.type("/find/al");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "2 matches in /find/" }).waitFor();
    expect(await page.locator("ul.results a").allInnerTexts()).toEqual(["/find/alpha", "/find/alps"]);
    await page.locator("ul.results a", { hasText: "/find/alps" }).focus();
    await page.keyboard.press("Enter");
    await page.waitForURL("**/ui/find/alps");
    await page.locator("h1", { hasText: "/find/alps" }).waitFor();
    await context.close();
  });

  it("pages through a large directory", async () => {
    // All-digit names list in numeric order (natural order), so the last page ends with 129.
    for (let i = 0; i < 130; i++) await server.tree.set(`/big/${i}`, int64(i));
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/big/");
    await page.locator("table.listing tbody tr").nth(99).waitFor();
    expect(await page.locator("table.listing tbody tr").count()).toBe(100);
    await page.getByRole("button", { name: /Load more/ }).click();
    await page.locator("table.listing tbody tr").nth(129).waitFor();
    expect(await page.locator("table.listing tbody tr").count()).toBe(130);
    expect(await page.locator("table.listing tbody tr td:nth-child(2) a").last().textContent()).toBe("129");
    await context.close();
  });
});

describe("view and edit", () => {
  it("saves an edited value with If-Match and shows the new version", async () => {
    await server.tree.set("/edit/greeting", str("hello"));
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/edit/greeting");
    await page.locator("#value-input").fill("hello, world");
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("dl.meta dd", { hasText: /^2$/ }).waitFor();
    const node = await server.tree.get("/edit/greeting");
    expect(node && "value" in node ? node.value : null).toEqual(str("hello, world"));
    expect(node?.version).toBe(2);
    await shot(page, "value-edit");
    await context.close();
  });

  it("edits json with validation, int64 beyond 2^53 exactly, and bool with a checkbox", async () => {
    await server.tree.set("/edit/cfg", json({ a: 1 }));
    await server.tree.set("/edit/big", int64(2n ** 60n));
    await server.tree.set("/edit/flag", bool(false));
    const { page, context } = await browser.open(server.url);

    await page.goto("/ui/edit/cfg");
    await page.locator("#value-input").fill('{"a": 2,');
    await page.locator("#value-input-error", { hasText: "not valid JSON" }).waitFor();
    expect(await page.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await page.locator("#value-input").fill('{"a": 2, "b": [true]}');
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("dl.meta dd", { hasText: /^2$/ }).waitFor();
    expect(await server.tree.get("/edit/cfg")).toMatchObject({ value: json({ a: 2, b: [true] }) });

    await page.goto("/ui/edit/big");
    expect(await page.locator("#value-input").inputValue()).toBe(String(2n ** 60n));
    await page.locator("#value-input").fill("9223372036854775807");
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("dl.meta dd", { hasText: /^2$/ }).waitFor();
    expect(await server.tree.get("/edit/big")).toMatchObject({ value: int64(2n ** 63n - 1n) });

    await page.goto("/ui/edit/flag");
    await page.locator("#value-input").check();
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("dl.meta dd", { hasText: /^2$/ }).waitFor();
    expect(await server.tree.get("/edit/flag")).toMatchObject({ value: bool(true) });
    await context.close();
  });

  it("shows a read-only key without a way to edit it", async () => {
    await server.tree.set("/edit/locked", str("fixed"), { ro: true });
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/edit/locked");
    await page.getByText("This key is read-only").waitFor();
    expect(await page.locator("#value-input").getAttribute("readonly")).not.toBeNull();
    expect(await page.getByRole("button", { name: "Save" }).count()).toBe(0);
    await context.close();
  });

  it("shows who saved first when a CLI write lands during an edit, and can overwrite it", async () => {
    await server.tree.set("/edit/shared", str("base text"));
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/edit/shared");
    await waitLive(page);
    await page.locator("#value-input").fill("my text");
    await writer.set("/edit/shared", "string:their text");
    // The live view says so while the edit is open, without throwing the edit away.
    await page.locator(".notice .warning", { hasText: "now version 2" }).waitFor();
    expect(await page.locator("#value-input").inputValue()).toBe("my text");
    await page.getByRole("button", { name: "Save" }).click();
    const message = page.locator("#conflict-message");
    await message.waitFor();
    expect(await message.textContent()).toContain(
      "You were editing version 1 of /edit/shared, but it is now version 2",
    );
    expect(await page.locator("#conflict-theirs").textContent()).toBe("their text");
    await shot(page, "edit-conflict");
    expect(await server.tree.get("/edit/shared")).toMatchObject({ value: str("their text") });
    await page.getByRole("button", { name: "Overwrite version 2 with mine" }).click();
    await page.locator("dl.meta dd", { hasText: /^3$/ }).waitFor();
    expect(await server.tree.get("/edit/shared")).toMatchObject({ value: str("my text"), version: 3 });
    await context.close();
  });

  it("creates and deletes a key, creates a directory, appends, and deletes it after confirmation", async () => {
    await server.tree.mkindex("/make/");
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/make/");
    await page.locator("summary", { hasText: "New key" }).click();
    await page.locator("#new-key-name").fill("note");
    await page.locator("#new-key-value").fill("written in the browser");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.waitForURL("**/ui/make/note");
    expect(await server.tree.get("/make/note")).toMatchObject({
      value: str("written in the browser"),
      version: 1,
    });

    // A value is deleted (with If-Match) after a confirmation too.
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.locator("#confirm-dialog").getByRole("button", { name: "Delete", exact: true }).click();
    await page.waitForURL("**/ui/make/");
    await page.locator("table.listing td", { hasText: "(empty)" }).waitFor();
    expect(await server.tree.get("/make/note")).toBeUndefined();

    await page.locator("summary", { hasText: "New directory" }).click();
    await page.locator("#new-dir-name").fill("queue");
    await page.getByRole("button", { name: "Create directory" }).click();
    await page.waitForURL("**/ui/make/queue/");
    await page.locator("summary", { hasText: "Append" }).click();
    await page.locator("#append-kind").selectOption("int64");
    await page.locator("#append-value").fill("5");
    await page.getByRole("button", { name: "Append", exact: true }).click();
    await page.locator("table.listing a", { hasText: /^0$/ }).waitFor();
    await page.getByRole("button", { name: "Append", exact: true }).click();
    await page.locator("table.listing a", { hasText: /^1$/ }).waitFor();
    expect(await server.tree.get("/make/queue/1")).toMatchObject({ value: int64(5) });

    await page.getByRole("button", { name: "Delete directory…" }).click();
    const dialog = page.locator("#confirm-dialog");
    await dialog
      .getByText("Delete the directory /make/queue/ and everything under it (2 direct children)")
      .waitFor();
    await shot(page, "deltree-confirm");
    // Cancel first: nothing is deleted.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(await server.tree.get("/make/queue/0")).toBeDefined();
    await page.getByRole("button", { name: "Delete directory…" }).click();
    await dialog.getByRole("button", { name: "Delete everything" }).click();
    await page.waitForURL("**/ui/make/");
    expect(await server.tree.get("/make/queue/")).toBeUndefined();
    await context.close();
  });
});

describe("live", () => {
  it("shows a key written by the CLI without reloading, in the listing and the tree", async () => {
    await server.tree.mkindex("/live/");
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/live/");
    await waitLive(page);
    await writer.set("/live/arrived", "string:from the CLI");
    await page.locator("table.listing td", { hasText: "from the CLI" }).waitFor();
    await page.locator('#tree-pane a[data-key="/live/arrived"]').waitFor();
    // An open value follows too.
    await page.locator("table.listing a", { hasText: "arrived" }).click();
    await page.locator("h1", { hasText: "/live/arrived" }).waitFor();
    await writer.set("/live/arrived", "string:changed again");
    await page.locator(".notice .info", { hasText: "Updated live to version 2" }).waitFor();
    expect(await page.locator("#value-input").inputValue()).toBe("changed again");
    await shot(page, "live-update");
    await context.close();
  });

  it("reconnects by itself after the server restarts, resuming with Last-Event-ID after the last change it saw", async () => {
    const own = await startServer();
    const { page, context } = await browser.open(own.url);
    const resumedFrom: string[] = [];
    page.on("request", (r) => {
      const id = r.headers()["last-event-id"];
      if (r.url().includes("/v1/watch/") && id !== undefined) resumedFrom.push(id);
    });
    await own.tree.mkindex("/r/");
    await page.goto("/ui/r/");
    await waitLive(page);
    await own.tree.set("/r/before", str("seen"));
    await page.locator("table.listing td", { hasText: "seen" }).waitFor();
    const lastSeen = String(own.tree.revision());
    const port = Number(new URL(own.url).port);
    await own.close();
    await page.locator('#live[data-state="retrying"]').waitFor();
    const again = await startServer({ dir: own.dir, port });
    try {
      await again.tree.set("/r/after-restart", str("back"));
      await waitLive(page);
      await page.locator("table.listing td", { hasText: "back" }).waitFor();
      expect(resumedFrom.length).toBeGreaterThan(0);
      expect(new Set(resumedFrom)).toEqual(new Set([lastSeen]));
    } finally {
      await context.close();
      await again.close();
      await removeDir(own.dir);
    }
  });
});

describe("event streams", () => {
  it("reads the same events however the stream is cut into chunks: CR/LF split, multi-line data, UTF-8 split", async () => {
    const { page, context, errors } = await browser.open(server.url);
    await page.goto("/ui/");
    // The page's own module, as the page loads it (a string: the test runner leaves it untransformed).
    await page.evaluate(
      "import('/assets/web/src/sse.js').then((m) => { globalThis.readEvents = m.readEvents; })",
    );
    const bytes = (t: string) => [...new TextEncoder().encode(t)];
    const utf8 = bytes("data: caf\u00e9\n\n");
    const at = utf8.indexOf(0xc3) + 1; // inside the two bytes of é
    const pieces = [
      ...[
        'data: {"a":',
        "1}\r",
        "\n\r\n: a comment\n",
        "id: 7\nevent: change\ndata: line one\n",
        "data: line two\n\n",
      ].map(bytes),
      bytes("data: x\r\rdata: y\n\n"),
      utf8.slice(0, at),
      utf8.slice(at),
      bytes("data: cut off, never ended"),
    ];
    type Event = { event: string; data: string; id?: string };
    const events = await page.evaluate(async (chunks: number[][]) => {
      const { readEvents } = globalThis as unknown as {
        readEvents(body: ReadableStream<Uint8Array>): AsyncIterable<Event>;
      };
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(new Uint8Array(next));
          else controller.close();
        },
      });
      const out: Event[] = [];
      for await (const ev of readEvents(body)) out.push(ev);
      return out;
    }, pieces);
    expect(events).toEqual([
      { event: "message", data: '{"a":1}' },
      { event: "change", data: "line one\nline two", id: "7" },
      { event: "message", data: "x", id: "7" },
      { event: "message", data: "y", id: "7" },
      { event: "message", data: "caf\u00e9", id: "7" },
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("history", () => {
  it("lists previous versions, diffs one against the current value and restores it in one click", async () => {
    await server.tree.set("/byteseek/hist/doc", str("line one\nline two"));
    await server.tree.set("/byteseek/hist/doc", str("line one\nline 2"));
    await server.tree.set("/byteseek/hist/doc", str("line one\nline 2\nline three"));
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/byteseek/hist/doc");
    await page.locator("summary", { hasText: "History" }).click();
    await page.locator('tr[data-version="1"]').waitFor();
    await page.getByRole("button", { name: "Diff v1" }).click();
    await page.locator("pre.diff .del", { hasText: "- line two" }).waitFor();
    const added = await page.locator("pre.diff .add").allInnerTexts();
    expect(added.map((t) => t.trimEnd())).toEqual(["+ line 2", "+ line three"]);
    await shot(page, "history-diff");
    await page.getByRole("button", { name: "Restore v1" }).click();
    await page.locator("dl.meta dd", { hasText: /^4$/ }).waitFor();
    expect(await page.locator("#value-input").inputValue()).toBe("line one\nline two");
    expect(await server.tree.get("/byteseek/hist/doc")).toMatchObject({
      value: str("line one\nline two"),
      version: 4,
    });
    await context.close();
  });
});

describe("token", () => {
  it("asks for the token once and keeps it for the session", async () => {
    const own = await startServer({ token: "s3cret-token" });
    await own.tree.set("/private/note", str("behind a token"));
    const { page, context, errors } = await browser.open(own.url);
    try {
      await page.goto("/ui/private/note");
      const dialog = page.locator("#token-dialog");
      await dialog.getByText("This server needs a token.").waitFor();
      await shot(page, "token-dialog");
      await dialog.getByLabel("Bearer token").fill("wrong");
      await dialog.getByRole("button", { name: "Use token" }).click();
      await dialog.getByText("The token was refused.").waitFor();
      await dialog.getByLabel("Bearer token").fill("s3cret-token");
      await dialog.getByRole("button", { name: "Use token" }).click();
      await page.locator("h1", { hasText: "/private/note" }).waitFor();
      expect(await page.locator("#value-input").inputValue()).toBe("behind a token");
      // The watch stream carries the token too.
      await waitLive(page);
      await page.reload();
      await page.locator("h1", { hasText: "/private/note" }).waitFor();
      expect(await dialog.isVisible()).toBe(false);
      await waitLive(page);
      expect(errors.filter((e) => !/401/.test(e))).toEqual([]);
    } finally {
      await context.close();
      await own.close();
      await removeDir(own.dir);
    }
  });
});

describe("the address with the token (as byteseek serve prints it)", () => {
  it("signs the page in with a cookie, drops the token from the address (a redirect, no page of its own), and asks for nothing", async () => {
    const own = await startServer({ token: "s3cret-token-2" });
    await own.tree.set("/private/paged", str("opened by its address"));
    const { page, context, errors } = await browser.open(own.url);
    try {
      await page.goto("/ui/private/paged?token=s3cret-token-2");
      await page.locator("h1", { hasText: "/private/paged" }).waitFor();
      expect(page.url()).toBe(`${own.url}/ui/private/paged`);
      expect(await page.locator("#value-input").inputValue()).toBe("opened by its address");
      // the watch stream rides on the cookie too
      await waitLive(page);
      expect(await page.locator("#token-dialog").isVisible()).toBe(false);
      // the cookie is HttpOnly (no script reads it) and SameSite=Strict
      expect(await page.evaluate<string>("document.cookie")).toBe("");
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });
      expect(cookie?.value).not.toContain("s3cret-token-2");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await own.close();
      await removeDir(own.dir);
    }
  });
});

describe("narrow window and keyboard", () => {
  it("stacks the panes on a phone-sized window and reaches the editor by keyboard", async () => {
    await server.tree.set("/narrow/value", str("small screen"));
    const { page, context } = await browser.open(server.url, { width: 390, height: 800 });
    await page.goto("/ui/narrow/value");
    await page.locator("h1", { hasText: "/narrow/value" }).waitFor();
    const width = await page.evaluate<number>("document.documentElement.scrollWidth");
    expect(width).toBeLessThanOrEqual(390);
    await shot(page, "narrow-value");
    // Skip link first, then straight into the content, then to the editor and Save.
    await page.keyboard.press("Tab");
    expect(await page.evaluate<string>("document.activeElement?.textContent")).toBe("Skip to content");
    await page.keyboard.press("Enter");
    await page.waitForFunction("document.activeElement?.id === 'main'");
    const focused = () => page.evaluate<string>('document.activeElement?.id ?? ""');
    for (let i = 0; i < 20 && (await focused()) !== "value-input"; i++) await page.keyboard.press("Tab");
    expect(await focused()).toBe("value-input");
    await page.keyboard.press("End");
    await page.keyboard.type(", typed");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("save");
    await page.keyboard.press("Enter");
    await page.locator("dl.meta dd", { hasText: /^2$/ }).waitFor();
    expect(await server.tree.get("/narrow/value")).toMatchObject({ value: str("small screen, typed") });
    await context.close();
  });
});
