/**
 * The sign-in of `kvspace mcp login`: the authorization server sends the browser back to a port on
 * the loopback interface that this process listens on for the one redirect (RFC 8252). A redirect
 * with another state is refused and the wait goes on; the first one that finishes ends it.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Tree } from "../../../tree/types.js";
import { ToolError } from "../../errors.js";
import { beginSignIn, finishSignIn, type SignInOptions } from "./sign-in.js";

export interface LoopbackSignInOptions extends SignInOptions {
  /** Shown the authorization URL once the listener is up (the CLI prints it). */
  open(authorizationUrl: string): void | Promise<void>;
  signal?: AbortSignal;
  /** How long to wait for the browser (default 5 minutes). */
  timeoutMs?: number;
}

export interface SignedIn {
  expiresAt?: number;
  scope?: string;
}

export async function signInWithLoopback(
  tree: Tree,
  server: string,
  options: LoopbackSignInOptions,
): Promise<SignedIn> {
  let settle: { resolve(v: SignedIn): void; reject(e: unknown): void } | undefined;
  const done = new Promise<SignedIn>((resolve, reject) => {
    settle = { resolve, reject };
  });
  done.catch(() => {});
  let finishing = false;
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
    if (url.pathname !== "/callback" || finishing) return page(res, 404, "Nothing here.");
    finishing = true;
    finishSignIn(tree, server, url, options).then(
      (out) => {
        page(res, 200, `Signed in to ${server}. You may close this tab.`);
        settle?.resolve(out);
      },
      (err: unknown) => {
        finishing = false;
        const message = err instanceof Error ? err.message : String(err);
        page(res, 400, `Not signed in: ${message}`);
        // a forged or stale redirect does not end the sign-in under way
        if (!(err instanceof ToolError && message.includes("state is not the one"))) settle?.reject(err);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  const timer = setTimeout(
    () =>
      settle?.reject(
        new ToolError(
          "mcp_sign_in",
          `no redirect came back within ${Math.round((options.timeoutMs ?? 300_000) / 1000)} s; run kvspace mcp login ${server} again`,
        ),
      ),
    options.timeoutMs ?? 300_000,
  );
  const onAbort = () => settle?.reject(new ToolError("aborted", "the sign-in was stopped"));
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const begun = await beginSignIn(tree, server, `http://127.0.0.1:${port}/callback`, options);
    await options.open(begun.authorizationUrl);
    return await done;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    http.closeAllConnections();
    await new Promise<void>((r) => http.close(() => r()));
  }
}

function page(res: ServerResponse, status: number, text: string): void {
  const body = `<!doctype html><meta charset="utf-8"><title>byteseek</title><p>${text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`)}</p>`;
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(body);
}
