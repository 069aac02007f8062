/**
 * Web page bench (issue 37 item 6: first paint ≤ 1 s on this machine, no layout shift, usable at
 * 1,000 runs and 5,000 tools): Debian's headless Chromium opens three pages of a real byteseek —
 * fastify, the built page, a classic-level store holding RUNS runs (each with its status, usage, a
 * first message and five call records, one in five of them failing) and TOOLS declared tools
 * (test/web/bulk-tools.ts) — in a fresh browser context each time (no cache): the landing page
 * (`/`, the overview), the runs list (`/runs/`) and the tools list (`/tools/`). Per load: first
 * contentful paint (the browser's own `paint` entry), the time until the page is filled from the
 * server (the overview's cards' `aria-busy` cleared, the runs list's first page, the tools list's
 * rows), and the cumulative layout shift (the browser's `layout-shift` entries, as Lighthouse sums
 * them). Also the server's time to answer `GET /v1/overview` at that many runs.
 *
 * Run: npm run build && node dist/bench/web.js [--quick] [--only /tools/]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pino } from "pino";
import type { Browser } from "playwright-core";
import { createByteseek } from "../compose/byteseek.js";
import { buildApp } from "../server/app.js";
import { keys } from "../shared/keys.js";
import { bulkTools } from "../test/web/bulk-tools.js";
import { launchChromium } from "../test/web/chromium.js";
import { openTree } from "../tree/index.js";
import type { ExportEntry } from "../tree/types.js";
import { fmt, median, printTable } from "./report.js";

const quick = process.argv.includes("--quick");
const RUNS = quick ? 100 : 1000;
const TOOLS = quick ? 500 : 5000;
/** `--only <path>`: that page alone (a quick look after a change to it). */
const only = process.argv[process.argv.indexOf("--only") + 1];
const LOADS = quick ? 3 : 7;

/** RUNS runs as NDJSON-style entries: status, usage, first message, five records. */
function* runEntries(now: number): Generator<ExportEntry> {
  const statuses = ["done", "done", "done", "failed", "interrupted"];
  for (let i = 0; i < RUNS; i++) {
    const vid = `r${(now - (RUNS - i) * 1000).toString(36)}${i.toString(16).padStart(4, "0")}`;
    yield {
      key: keys.runStatus(vid),
      kind: "char/utf8",
      value: statuses[i % statuses.length] ?? "done",
    };
    yield { key: keys.session(vid, 0), kind: "json", value: { role: "user", content: `task ${i}` } };
    yield {
      key: keys.usage(vid),
      kind: "json",
      value: { steps: 3, calls: 5, tokens: { input: 2000 + i, output: 100 } },
    };
    for (let n = 0; n < 5; n++) {
      const failing = (i * 5 + n) % 5 === 0;
      yield {
        key: keys.toolRecord(vid, n),
        kind: "json",
        value: {
          name:
            ["shell.run", "edit.read", "edit.replace", "tree.get", "edit.grep"][(i + n) % 5] ?? "shell.run",
          args: { n },
          kind: failing ? "runtime" : "ok",
          isError: failing,
          text: failing ? "exit code 1: something went wrong" : "ok",
          details: {},
          ts: now,
          ms: 3,
          state: "done",
        },
      };
    }
  }
}

/**
 * LOADS cold loads of `path`: per load the first contentful paint (the browser's own `paint`
 * entry), the time until `filled` (a script expression) holds, and the cumulative layout shift
 * (the browser's `layout-shift` entries, summed as Lighthouse does).
 */
async function measure(
  browser: Browser,
  url: string,
  path: string,
  filled: string,
): Promise<{ fcp: number[]; ready: number[]; cls: number[] }> {
  const out = { fcp: [] as number[], ready: [] as number[], cls: [] as number[] };
  for (let i = 0; i < LOADS; i++) {
    // bypassCSP: the page forbids eval, which playwright's waits on a text expression use
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      baseURL: url,
      bypassCSP: true,
    });
    const page = await context.newPage();
    // the page's own scripts, as text: this bench is compiled without the DOM's types
    await page.addInitScript(`
      window.__cls = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (!e.hadRecentInput) window.__cls += e.value;
      }).observe({ type: "layout-shift", buffered: true });
    `);
    await page.goto(path);
    await page.waitForFunction(filled);
    out.ready.push(await page.evaluate<number>("performance.now()"));
    // a moment for late shifts (the watch connecting, the header's workspace) to be counted
    await page.waitForTimeout(300);
    out.fcp.push(
      await page.evaluate<number>(
        `performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN`,
      ),
    );
    out.cls.push(await page.evaluate<number>("window.__cls"));
    await context.close();
  }
  return out;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-web-"));
  const location = join(dir, "store");
  const tree = await openTree({ backend: "classic", location });
  const logger = pino({ level: "silent" });
  const bs = await createByteseek({ tree, workspace: dir, logger, env: {}, sweep: false });
  await tree.import(runEntries(Date.now()));
  await tree.import(bulkTools(TOOLS));
  const app = await buildApp({
    tree: bs.tree,
    logger,
    runtime: bs.runtime,
    agent: bs.agent,
    mcp: bs.mcp,
    models: bs.models,
    store: { engine: "classic", location, sync: "always" },
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const browser = await launchChromium();
  try {
    // the server's part alone, warm
    const api: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/overview`);
      await res.arrayBuffer();
      api.push(performance.now() - t0);
    }

    const views: Array<[string, string, string]> = [
      [
        "/ (the overview)",
        "/",
        `document.querySelectorAll(".overview .card").length === 6 &&
         document.querySelectorAll(".overview .card[aria-busy]").length === 0 &&
         document.querySelector(".approvals-card h2") !== null`,
      ],
      [
        `/runs/ (${RUNS} runs)`,
        "/runs/",
        `/^Runs 1–/.test(document.querySelector("#runs-summary")?.textContent ?? "")`,
      ],
      [
        `/tools/ (${TOOLS} tools)`,
        "/tools/",
        `/ shown$/.test(document.querySelector("#tool-count")?.textContent ?? "") &&
         document.querySelector("#tool-list li[data-tool]") !== null`,
      ],
    ];
    const rows: string[][] = [];
    for (const [label, path, filled] of views) {
      if (process.argv.includes("--only") && path !== only) continue;
      const m = await measure(browser, url, path, filled);
      rows.push(
        [`${label}: first contentful paint, ms`, fmt(median(m.fcp)), fmt(Math.max(...m.fcp)), "≤ 1000 ms"],
        [`${label}: filled from the server, ms`, fmt(median(m.ready)), fmt(Math.max(...m.ready)), ""],
        [
          `${label}: cumulative layout shift`,
          median(m.cls).toFixed(4),
          Math.max(...m.cls).toFixed(4),
          "≤ 0.1 (good)",
        ],
      );
    }
    rows.push([`GET /v1/overview at ${RUNS} runs, ms`, fmt(median(api)), fmt(Math.max(...api)), ""]);
    printTable(["figure", "median", "max", "bar"], rows);
    console.log(
      `\n${RUNS} runs, ${RUNS * 5} call records, ${TOOLS} declared tools; ${LOADS} cold loads of each page (a fresh browser context each)`,
    );
  } finally {
    await browser.close();
    await app.close();
    await bs.close();
    await tree.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
