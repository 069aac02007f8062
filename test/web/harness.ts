/**
 * Builders for the web page's end-to-end tests: a real server (`buildApp` on 127.0.0.1:0 with a
 * classic-level store in a temp folder) serving the page, and a real headless Debian chromium
 * driven by playwright-core with a fresh profile.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, vi } from "vitest";
import { buildApp } from "../../server/app.js";
import type { PendingApproval } from "../../tools/call/call-notices.js";
import { createCheckedTree } from "../../tools/catalogue/checked-tree.js";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createEditTools } from "../../tools/edit/index.js";
import { createMcpClient, type McpClient } from "../../tools/mcp/client.js";
import { createRuntime } from "../../tools/runtime.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import { json, openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { launchChromium } from "./chromium.js";

export const ROOT = resolve(import.meta.dirname, "..", "..");
export const ARTIFACTS = join(ROOT, "test-artifacts", "web");

/**
 * Compiles the page's scripts (`tsc -p web/tsconfig.json`) when web/dist is missing or older than
 * a source — the page's own, or a module it shares with the server (each script web/dist holds
 * outside web/src/ stands for one) — so the tests always drive the current sources, whether or
 * not the build ran first.
 */
export async function ensureWebBuilt(): Promise<void> {
  const dist = join(ROOT, "web", "dist");
  const built = await stat(join(dist, "web", "src", "main.js")).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  const sources = (await readdir(join(ROOT, "web", "src"))).map((f) => join("web", "src", f));
  if (built > 0)
    for (const f of await readdir(dist, { recursive: true }))
      if (f.endsWith(".js") && !f.startsWith(join("web", "src"))) sources.push(f.replace(/\.js$/, ".ts"));
  let newest = 0;
  for (const f of sources)
    newest = Math.max(
      newest,
      await stat(join(ROOT, f)).then(
        (s) => s.mtimeMs,
        () => Number.POSITIVE_INFINITY,
      ),
    );
  if (built >= newest) return;
  await promisify(execFile)(process.execPath, [
    join(ROOT, "node_modules", "typescript", "bin", "tsc"),
    "-p",
    join(ROOT, "web", "tsconfig.json"),
  ]);
}

export interface TestServer {
  url: string;
  tree: Tree;
  /** The tool runtime, when started with `tools`. */
  runtime?: ReturnType<typeof createRuntime>;
  /** The MCP client, when started with `mcp`. */
  mcp?: McpClient;
  dir: string;
  close(): Promise<void>;
}

/**
 * A byteseek server on a loopback port over a fresh classic-level store; with `tools`, the tool
 * runtime too (the tree and edit families, seeded into the tree, workspace in the temp folder).
 */
export async function startServer(
  options: {
    token?: string;
    dir?: string;
    port?: number;
    tools?: boolean;
    mcp?: boolean;
    /** Writes go through the tools' checked tree, as `byteseek serve`'s do (a person's write disowns a run's key). */
    checked?: boolean;
  } = {},
): Promise<TestServer> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "byteseek-web-")));
  const raw = await openTree({ backend: "classic", location: join(dir, "store") });
  const tree = options.checked
    ? createCheckedTree(raw, {
        builtins: () => new Map([...createTreeTools(), ...createEditTools()].map((b) => [b.ref, b])),
      })
    : raw;
  const logger = pino({ level: "silent" });
  let runtime: ReturnType<typeof createRuntime> | undefined;
  let mcp: McpClient | undefined;
  if (options.tools) {
    const builtins = [...createTreeTools(), ...createEditTools()];
    const workspace = join(dir, "workspace");
    await mkdir(workspace, { recursive: true });
    await seedTools({ tree, builtins, logger });
    if (options.mcp) mcp = createMcpClient({ tree, logger, workspace, env: process.env });
    runtime = createRuntime({ tree, builtins, logger, workspace, ...(mcp ? { mcp } : {}) });
  }
  const app = await buildApp({
    tree,
    logger,
    ...(options.token ? { token: options.token } : {}),
    ...(runtime ? { runtime } : {}),
    ...(mcp ? { mcp } : {}),
    watchProgressMs: 1000,
  });
  await app.listen({ host: "127.0.0.1", port: options.port ?? 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tree,
    ...(runtime ? { runtime } : {}),
    ...(mcp ? { mcp } : {}),
    dir,
    async close() {
      await app.close();
      await mcp?.close();
      await runtime?.close();
      await tree.close();
    },
  };
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * A new page that records every request it makes and every script error, so a test can assert
 * that nothing left the server's origin and nothing threw.
 */
export async function openPage(browser: Browser, baseUrl: string, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport, baseURL: baseUrl });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  return { page, context, requests, errors };
}

/**
 * The Chromium of this test process, launched by the first browser test file it runs and kept for
 * the next ones (vitest.config.ts's isolate: false keeps this module between a worker's files):
 * a launch costs ~2 s of CPU, and each file still gets fresh contexts (cookies, storage) of its
 * own. It goes with the process: playwright kills what it launched when its process exits.
 */
let shared: Promise<Browser> | undefined;

function sharedBrowser(): Promise<Browser> {
  if (shared === undefined) {
    const launching = launchChromium();
    shared = launching;
    launching.then(
      (b) =>
        b.on("disconnected", () => {
          if (shared === launching) shared = undefined;
        }),
      () => {
        if (shared === launching) shared = undefined;
      },
    );
  }
  return shared;
}

/**
 * One browser for a test file: vitest's limits raised for a real browser on a shared machine
 * (every wait in these tests is for a condition, never a fixed time), the page's scripts built and
 * Chromium ready before the file's tests (the process's, sharedBrowser()), and every context the
 * file opened closed after them, so no page of one file outlives it. `open` is openPage on it.
 */
export function useBrowser(): {
  open(baseUrl: string, viewport?: { width: number; height: number }): ReturnType<typeof openPage>;
  /** A page opened at `/ui/`, once its watch of the tree is live (what changes now, it shows). */
  openLive(baseUrl: string): ReturnType<typeof openPage>;
} {
  vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });
  let browser: Browser | undefined;
  const contexts = new Set<BrowserContext>();
  beforeAll(async () => {
    await ensureWebBuilt();
    browser = await sharedBrowser();
  });
  afterAll(async () => {
    await Promise.all([...contexts].map((c) => c.close()));
  });
  async function open(baseUrl: string, viewport?: { width: number; height: number }) {
    if (!browser) throw new Error("the browser is launched in beforeAll: open pages from the tests");
    const opened = await openPage(browser, baseUrl, viewport);
    contexts.add(opened.context);
    opened.context.on("close", () => contexts.delete(opened.context));
    return opened;
  }
  return {
    open,
    async openLive(baseUrl) {
      const opened = await open(baseUrl);
      await opened.page.goto("/ui/");
      await opened.page.locator('#live[data-state="live"]').waitFor();
      return opened;
    },
  };
}

/**
 * A call of `tool` by run `vid` that waits for a person's approval: `pending` resolves once it
 * waits (with its approval's key and hash), `call` with its result once a person decided.
 */
export function callAwaitingApproval(
  runtime: ReturnType<typeof createRuntime>,
  tool: string,
  args: Record<string, unknown>,
  vid: string,
): { pending: Promise<PendingApproval>; call: ReturnType<ReturnType<typeof createRuntime>["call"]> } {
  let noticed: (p: PendingApproval) => void = () => undefined;
  const pending = new Promise<PendingApproval>((res) => {
    noticed = res;
  });
  const call = runtime.call(tool, args, { vid, waitForApproval: true, onApproval: noticed });
  return { pending, call };
}

/** A person makes `tool` ask before it runs: its declaration in `tree` gets `confirm: true`. */
export async function requireConfirm(tree: Tree, tool: string): Promise<void> {
  const key = `/byteseek/tools/${tool}`;
  const node = await tree.get(key);
  const decl = node && "value" in node ? (node.value.value as Record<string, unknown>) : {};
  await tree.set(key, json({ ...decl, confirm: true } as never));
}

/**
 * A view as it looks, for the README's "The web console": docs/screenshots/<name>.png when
 * UPDATE_SCREENSHOTS=1 (then committed), else beside the other test artifacts, so a plain test run
 * leaves the work tree clean. What the window shows from the top, not the whole page: a small picture.
 */
export async function docsShot(page: Page, name: string): Promise<void> {
  const dir = process.env.UPDATE_SCREENSHOTS === "1" ? join(ROOT, "docs", "screenshots") : ARTIFACTS;
  await mkdir(dir, { recursive: true });
  // a string: this file is type-checked without the DOM's types
  await page.evaluate("document.activeElement?.blur(); window.scrollTo(0, 0)");
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
