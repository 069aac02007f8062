/**
 * Opens a URL in the person's browser, where there is one: `$BROWSER` (a program taking the URL as
 * its one argument) when set, else the platform's opener on a desktop — `open` on macOS, the URL
 * handler on Windows, `xdg-open` where Linux has a display. A headless machine opens nothing (the
 * URL is printed anyway). The URL is an argument, never part of a shell line; a failure to open
 * is silent, since the person can still copy the printed URL. Only http(s) URLs are opened: the
 * authorization URL comes from metadata an upstream chose, and an opener handed `file:`, a custom
 * scheme or an argument-looking string would do something else than show a sign-in page.
 */
import { spawn } from "node:child_process";

/** The command that opens a URL here, or undefined on a machine without a desktop. */
export function browserCommand(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string[] | undefined {
  if (env.BROWSER) return [env.BROWSER];
  if (platform === "darwin") return ["open"];
  if (platform === "win32") return ["rundll32", "url.dll,FileProtocolHandler"];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ["xdg-open"];
  return undefined;
}

/** Whether `url` is one a browser may be started on: an absolute http(s) URL, as written. */
export function openableUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return (parsed.protocol === "https:" || parsed.protocol === "http:") && /^https?:\/\//i.test(url);
}

/** Starts the browser on `url` and leaves it running; answers whether an opener was started. */
export function openUrl(url: string, env: NodeJS.ProcessEnv): boolean {
  const [command, ...args] = browserCommand(env) ?? [];
  if (command === undefined || !openableUrl(url)) return false;
  try {
    const child = spawn(command, [...args, url], { detached: true, stdio: "ignore", env });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
