/**
 * The credential `byteseek serve` makes at first start (issue 31, item 6): `<store>/token`, mode
 * 0600, made once and kept; a file that may not be trusted is refused; the page's address with the
 * token is printed once, on stderr, never in the logs.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, lstat, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import pino from "pino";
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ServerError } from "../../server/errors.js";
import { startServer } from "../../server/main.js";
import { ensureStoreToken, readStoreToken } from "../../server/token-file.js";
import { BYTESEEK_BIN } from "../mcp/helpers.js";
import { tempDir } from "./helpers.js";

const silent = pino({ level: "silent" });
const run = promisify(execFile);

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  dir = await tempDir("byteseek-token-");
});
afterEach(async () => {
  await dir.remove();
});

/** `byteseek serve` as server/main.ts starts it, on the folder `store`, the environment given. */
const serve = (store: string, env: Record<string, string> = {}) =>
  startServer({
    env: { KVSPACE: store, BYTESEEK_PORT: "0", BYTESEEK_WORKSPACE: dir.path, ...env },
    cwd: dir.path,
    logger: silent,
    handleSignals: false,
  });

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(url, { headers });
  await res.body.dump();
  return res.statusCode;
}

describe("the store's token file", () => {
  it("is made at first start with mode 0600, kept across restarts, and is the only way in besides /healthz and the page", async () => {
    const store = join(dir.path, "store");
    const first = await serve(store);
    let token: string;
    try {
      expect(first.tokenFile).toBe(join(store, "token"));
      const st = await lstat(join(store, "token"));
      expect(st.isFile()).toBe(true);
      expect(st.mode & 0o777).toBe(0o600);
      token = (await readFile(join(store, "token"), "utf8")).trim();
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(first.token).toBe(token);
      expect(first.pageUrl).toBe(`${first.url}/?token=${token}`);
      expect(await status(`${first.url}/v1/tree/`)).toBe(401);
      expect(await status(`${first.url}/v1/tree/`, { authorization: `Bearer ${token}` })).toBe(200);
      expect(await status(`${first.url}/healthz`)).toBe(200);
      expect(await status(`${first.url}/`)).toBe(200);
      expect(await status(`${first.url}/assets/style.css`)).toBe(200);
    } finally {
      await first.close();
    }
    const again = await serve(store);
    try {
      expect(again.token).toBe(token);
      // nothing left beside it (the file is written under a temporary name, then linked into place)
      expect((await readdir(store)).filter((n) => n.startsWith(".token-"))).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it("is not made when BYTESEEK_TOKEN names the token", async () => {
    const store = join(dir.path, "store");
    const server = await serve(store, { BYTESEEK_TOKEN: "a-token-of-my-own" });
    try {
      expect(server.token).toBe("a-token-of-my-own");
      expect(server.tokenFile).toBeUndefined();
      await expect(lstat(join(store, "token"))).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await server.close();
    }
  });

  it("is made once when two processes race for it: both read the one that won", async () => {
    const made = await Promise.all([ensureStoreToken(dir.path), ensureStoreToken(dir.path)]);
    expect(made[0].token).toBe(made[1].token);
    expect(await readStoreToken(dir.path)).toBe(made[0].token);
  });

  it("is refused, never read nor rewritten, when it is a symlink, readable by others or not a token", async () => {
    const store = join(dir.path, "store");
    // a first start makes the folder (and a token file, removed below)
    await (await serve(store)).close();
    const path = join(store, "token");
    const elsewhere = join(dir.path, "elsewhere");
    await writeFile(elsewhere, "planted-token-value\n", { mode: 0o600 });
    const cases: Array<[string, () => Promise<void>, RegExp]> = [
      ["a symlink", () => symlink(elsewhere, path), /it is a symlink/],
      [
        "readable by others",
        async () => {
          await writeFile(path, "some-token-value\n", { mode: 0o600 });
          await chmod(path, 0o644);
        },
        /its mode is 644: others may read it/,
      ],
      ["not a token", () => writeFile(path, "two words\n", { mode: 0o600 }), /it does not hold a token/],
    ];
    for (const [what, plant, why] of cases) {
      await rm(path, { force: true, recursive: true });
      await plant();
      let err: unknown;
      try {
        await (await serve(store)).close();
      } catch (e) {
        err = e;
      }
      expect(err, what).toBeInstanceOf(ServerError);
      expect((err as ServerError).code).toBe("SERVER_CONFIG");
      expect((err as ServerError).message).toMatch(why);
      expect((err as ServerError).message).toMatch(/Remove it .* or set BYTESEEK_TOKEN/);
    }
    expect(await readFile(elsewhere, "utf8")).toBe("planted-token-value\n");
  });
});

describe("another local user", () => {
  it("gets 401 from the TCP API of a server started the default way, and cannot read its token file", async () => {
    const user = `bsprobe${randomBytes(3).toString("hex")}`;
    await run("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user]);
    const store = join(dir.path, "store");
    const server = await serve(store);
    try {
      const token = join(store, "token");
      // as that user: read the token file, then ask the API for the policy and for a command
      const probe = `(async () => {
        let read = "read";
        try { require("node:fs").readFileSync(${JSON.stringify(token)}); } catch (e) { read = e.code; }
        const get = await fetch(${JSON.stringify(`${server.url}/v1/tree/byteseek/policy`)});
        const post = await fetch(${JSON.stringify(`${server.url}/v1/tools/shell.run/call`)}, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ args: { command: "id > owned.txt" }, vid: "other-user" }),
        });
        process.stdout.write(JSON.stringify({ read, get: get.status, post: post.status }));
      })()`;
      const { stdout } = await run("runuser", ["-u", user, "--", process.execPath, "-e", probe]);
      expect(JSON.parse(stdout)).toEqual({ read: "EACCES", get: 401, post: 401 });
      expect(await server.tree.get("/byteseek/tool/other-user/0")).toBeUndefined();
    } finally {
      await server.close();
      await run("userdel", [user]);
    }
  });
});

describe("byteseek serve", () => {
  it("prints the page's address with the token once, on stderr, and never logs the token; the address signs the page in", async () => {
    const store = join(dir.path, "store");
    const child = spawn(process.execPath, [BYTESEEK_BIN, "serve"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: dir.path,
        KVSPACE: store,
        BYTESEEK_PORT: "0",
        BYTESEEK_WORKSPACE: dir.path,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    try {
      const page = await new Promise<string>((resolve, reject) => {
        child.stderr.on("data", (d: Buffer) => {
          err += d.toString();
          const m = /byteseek: open (http:\/\/127\.0\.0\.1:[0-9]+\/\?token=[A-Za-z0-9_-]+) /.exec(err);
          if (m) resolve(m[1] as string);
        });
        child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${err}${out}`)));
      });
      const token = (await readFile(join(store, "token"), "utf8")).trim();
      expect(page.endsWith(`?token=${token}`)).toBe(true);
      expect(err).toContain(`the token is kept in ${join(store, "token")}`);
      // the start line names the workspace the file tools work in (#35 item 5)
      expect(err).toContain(` (workspace ${dir.path}; the token`);
      const opened = await request(page);
      await opened.body.dump();
      expect(opened.statusCode).toBe(303);
      const cookie = String(opened.headers["set-cookie"]).split(";")[0] as string;
      expect(await status(new URL("/v1/tree/", page).href, { cookie })).toBe(200);
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      expect(err.split(token).length - 1).toBe(1);
      expect(out).toContain('"msg":"listening"');
      expect(out).not.toContain(token);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("refuses BYTESEEK_TOKEN= without --no-auth, and --no-auth without BYTESEEK_TOKEN=, saying what to do; both together serve without a credential", async () => {
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number | null; err: string; child: ReturnType<typeof spawn> }>((resolve) => {
        const child = spawn(process.execPath, [BYTESEEK_BIN, "serve", ...args], {
          env: {
            PATH: process.env.PATH ?? "/usr/bin:/bin",
            KVSPACE: join(dir.path, "store"),
            BYTESEEK_PORT: "0",
            BYTESEEK_WORKSPACE: dir.path,
            ...env,
          },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let err = "";
        child.stderr!.on("data", (d: Buffer) => {
          err += d.toString();
          if (err.includes("WITHOUT a credential")) resolve({ code: null, err, child });
        });
        child.once("exit", (code) => resolve({ code, err, child }));
      });
    const empty = await run([], { BYTESEEK_TOKEN: "" });
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/BYTESEEK_TOKEN is set but empty: unset it .* or add --no-auth/);
    const flag = await run(["--no-auth"], {});
    expect(flag.code).toBe(1);
    expect(flag.err).toContain("BYTESEEK_TOKEN= byteseek serve --no-auth");
    const both = await run(["--no-auth"], { BYTESEEK_TOKEN: "" });
    try {
      expect(both.code).toBeNull();
      expect(both.err).toContain("anyone who reaches it can run commands as this user");
      await expect(lstat(join(dir.path, "store", "token"))).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      both.child.kill("SIGTERM");
      await new Promise((r) => both.child.once("exit", r));
    }
  });
});
