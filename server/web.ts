/**
 * The browser page (issue 7): `webRoutes` serves `web/static/index.html` at `/` and at every page
 * address — `/ui/<key>` (a tree node), `/tools/`, `/tools/<name>`, `/runs/<vid>` — so a link
 * opens the same view, and the page's assets at `/assets/<file>`: the compiled scripts from
 * `web/dist/` (built by `tsc -p web/tsconfig.json`: the page at `web/src/`, beside the few
 * Node-free modules it shares with the server, such as `shared/sse.js`), styles and icon from
 * `web/static/`.
 *
 * The page holds no data and no secret, so its routes carry `config: { public: true }`: the
 * credential check lets them through. Opened as `/?token=…` (the address `byteseek serve` prints),
 * a page address trades the token for the server's cookie (server/auth.ts) and redirects to itself
 * without the token, so it leaves the address bar and the history; the page's API calls then carry
 * the cookie. A page without one asks for the token and sends it as a bearer token.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Answered without a token (the auth check should let such routes through). */
    public?: boolean;
  }
}

export interface WebRoutesOptions {
  /** The folder holding `web/static/` and `web/dist/`; default: found from this file upwards. */
  root?: string;
  /** A Set-Cookie header for the server's token, undefined for any other (server/auth.ts); absent: no token. */
  exchange?: (token: string) => string | undefined;
}

/** Page addresses answered with index.html (the page reads the address itself). */
export const PAGE_ROUTES = [
  "/",
  "/ui",
  "/ui/*",
  "/tools",
  "/tools/*",
  "/runs",
  "/runs/*",
  "/agent",
  "/agent/*",
] as const;

/** Headers on the page: it may fetch from its own origin only, nothing external. */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-cache",
} as const;

/** An asset's name: path segments of letters, digits, '_', '-' and '.', none starting with a dot. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/** Finds the package folder that holds `web/static/index.html`, from this module's folder up. */
export function findWebRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "web", "static", "index.html"))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`web/static/index.html not found above ${from}: is the package installed whole?`);
  }
}

export const webRoutes: FastifyPluginAsync<WebRoutesOptions> = async function webRoutes(app, options) {
  const root = options.root ?? findWebRoot();
  const staticDir = join(root, "web", "static");
  // The page's tsconfig has the repository as its root (it shares modules with the server), so its
  // own scripts land under web/src/ and are asked for as /assets/web/src/<file>.
  const distDir = join(root, "web", "dist");
  if (!existsSync(join(distDir, "web", "src", "main.js")))
    app.log.warn({ distDir }, "the web page's scripts are not built: run `tsc -p web/tsconfig.json`");

  // Only the reply.sendFile decorator: the routes below are ours, so they can carry `public`.
  await app.register(fastifyStatic, { root: staticDir, serve: false });

  const config = { public: true };
  const hide = { hide: true };

  function sendPage(req: FastifyRequest, reply: FastifyReply) {
    const url = new URL(req.url, "http://page");
    const token = url.searchParams.get("token");
    if (token !== null) {
      // A right token becomes the cookie, a wrong one nothing (the page then asks); either way the
      // token leaves the address at once.
      const cookie = options.exchange?.(token);
      url.searchParams.delete("token");
      reply.code(303).headers({
        // never `//host…`, which a browser would read as another site
        location: `${url.pathname.replace(/^\/+/, "/")}${url.search}`,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        ...(cookie === undefined ? {} : { "set-cookie": cookie }),
      });
      return reply.send();
    }
    reply.headers(PAGE_HEADERS);
    return reply.sendFile("index.html", staticDir, { cacheControl: false });
  }
  for (const url of PAGE_ROUTES) app.get(url, { config, schema: hide }, sendPage);

  app.get<{ Params: { "*": string } }>("/assets/*", { config, schema: hide }, function sendAsset(req, reply) {
    const name = req.params["*"];
    // Plain file names only: anything odd (traversal, encoded dots, NUL, a folder) is not an asset.
    if (!ASSET_NAME.test(name))
      return reply.code(404).send({
        error: { code: "HTTP_NOT_FOUND", message: `no asset ${JSON.stringify(name.slice(0, 100))}` },
      });
    // Compiled scripts (and their source maps) come from web/dist, everything else from web/static.
    const dir = /\.js(\.map)?$/.test(name) ? distDir : staticDir;
    reply.headers({ "x-content-type-options": "nosniff", "cache-control": "no-cache" });
    return reply.sendFile(name, dir, { cacheControl: false });
  });
};
