import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openableUrl, openUrl } from "../../cli/open-url.js";
import { until } from "../mcp-client/helpers.js";
import { tempDir } from "../tools/helpers.js";

describe("openUrl (the sign-in URL an upstream's metadata chose)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let browser: string;
  let seen: string;
  beforeAll(async () => {
    dir = await tempDir("byteseek-open-url-");
    browser = join(dir.path, "browser.cjs");
    seen = join(dir.path, "seen");
    // a "browser" that appends each URL it is started on
    await writeFile(
      browser,
      `#!${process.execPath}\nrequire("node:fs").appendFileSync(${JSON.stringify(seen)}, process.argv[2] + "\\n");\n`,
      { mode: 0o755 },
    );
  });
  afterAll(() => dir.remove());

  it("never starts the browser on a file:, javascript:, custom-scheme or option-looking URL", () => {
    for (const url of [
      "file:///etc/passwd",
      "javascript:alert(1)",
      "vscode://open?x=1",
      "--help",
      "-new-window https://as.test/",
      "HTTPS:example.test/no-slashes",
      "not a url",
    ]) {
      expect(openableUrl(url), url).toBe(false);
      expect(openUrl(url, { BROWSER: browser }), url).toBe(false);
    }
    expect(existsSync(seen)).toBe(false);
  });

  it("starts the browser on an https or http URL, as its one argument", async () => {
    const url = "https://as.test/authorize?client_id=a&state=b c";
    expect(openUrl(url, { BROWSER: browser })).toBe(true);
    await until(async () => existsSync(seen));
    expect((await readFile(seen, "utf8")).trim()).toBe(url);
    expect(openableUrl("http://127.0.0.1:8080/authorize")).toBe(true);
  });
});
