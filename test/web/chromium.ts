/**
 * Debian's chromium, headless, as the browser tests (harness.ts) and the web bench (bench/web.ts)
 * launch it. No vitest here: the bench imports it.
 */
import { type Browser, chromium } from "playwright-core";

/**
 * A headless chromium. `launch` gives it a fresh user-data-dir of its own in a temp folder
 * (playwright refuses a --user-data-dir argument here), removed when it closes.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
