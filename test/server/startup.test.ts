import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import pino from "pino";
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clientUrlOrigins } from "../../agent/llm-config.js";
import { ServerError } from "../../server/errors.js";
import { readConfig, startServer } from "../../server/main.js";
import { openTree } from "../../tree/index.js";
import { tempDir } from "./helpers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const FIXTURE = join(ROOT, "test", "fixtures", "server-run.mjs");
const silent = pino({ level: "silent" });

/** The error `fn` throws (or rejects with), which must be a SERVER_CONFIG ServerError. */
async function configError(fn: () => unknown): Promise<ServerError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).code).toBe("SERVER_CONFIG");
    return err as ServerError;
  }
  throw new Error("expected a SERVER_CONFIG error, but it went through");
}

/** The header a server started the default way (its token in the store folder) takes. */
const bearer = (server: { token: string | undefined }): Record<string, string> => ({
  authorization: `Bearer ${server.token}`,
});

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await dir.remove();
});

describe("readConfig", () => {
  it("defaults to 127.0.0.1:7411, ./data, sync always, an 8 MiB body limit, a 32 MiB node cache, 10 versions of history, loopback hosts only, 60 s to receive a request, 1,000 watches, ./workspace, 30 minutes before an idle MCP session is closed and the fast lanes", () => {
    expect(readConfig({}, "/srv")).toEqual({
      store: { backend: "classic", location: "/srv/data", sync: "always", cacheBytes: 32 * 1024 * 1024 },
      host: "127.0.0.1",
      port: 7411,
      bodyLimit: 8 * 1024 * 1024,
      // the address it listens on, as with every credential
      allowedHosts: ["127.0.0.1"],
      bodyTimeoutMs: 60_000,
      maxWatches: 1000,
      mcpSessionIdleMs: 30 * 60_000,
      workspace: "/srv/workspace",
      defaultWorkspace: true,
      fast: true,
      auth: "file",
    });
    expect(readConfig({ BYTESEEK_SYNC: "never" }).store).toMatchObject({ sync: "never" });
    expect(readConfig({ BYTESEEK_WORKSPACE: "proj" }, "/srv")).toMatchObject({
      workspace: "/srv/proj",
      defaultWorkspace: false,
    });
  });

  it("reads BYTESEEK_ALLOWED_HOSTS only with a credential, and the bounds as whole numbers", async () => {
    expect(
      readConfig({ BYTESEEK_TOKEN: "t", BYTESEEK_ALLOWED_HOSTS: " kv.example.com, 10.0.0.5:7411 " })
        .allowedHosts,
    ).toEqual(["kv.example.com", "10.0.0.5:7411", "127.0.0.1"]);
    expect(readConfig({ BYTESEEK_TOKEN: "t", BYTESEEK_HOST: "0.0.0.0" }).allowedHosts).toEqual([]);
    // the token kept in the store folder is a credential too
    expect(readConfig({ BYTESEEK_ALLOWED_HOSTS: "kv.example.com" }).allowedHosts).toEqual([
      "kv.example.com",
      "127.0.0.1",
    ]);
    expect(
      (
        await configError(() =>
          readConfig({ BYTESEEK_TOKEN: "", BYTESEEK_ALLOWED_HOSTS: "kv.example.com" }, "/srv", {
            noAuth: true,
          }),
        )
      ).message,
    ).toMatch(/needs a credential/);
    expect(
      readConfig({ BYTESEEK_BODY_TIMEOUT: "0", BYTESEEK_MAX_WATCHES: "5", BYTESEEK_MCP_SESSION_IDLE: "0" }),
    ).toMatchObject({ bodyTimeoutMs: 0, maxWatches: 5, mcpSessionIdleMs: 0 });
    expect(readConfig({ BYTESEEK_MCP_SESSION_IDLE: "60000" }).mcpSessionIdleMs).toBe(60_000);
    expect((await configError(() => readConfig({ BYTESEEK_MCP_SESSION_IDLE: "30m" }))).message).toMatch(
      /BYTESEEK_MCP_SESSION_IDLE must be a whole number/,
    );
    expect((await configError(() => readConfig({ BYTESEEK_MAX_WATCHES: "0" }))).message).toMatch(
      /BYTESEEK_MAX_WATCHES must be a whole number above 0/,
    );
  });

  it("refuses a BYTESEEK_LLM_CLIENT_URLS entry that is not an origin at start", async () => {
    const listed = { BYTESEEK_LLM_CLIENT_URLS: " http://127.0.0.1:11434, https://models.example " };
    expect(() => readConfig(listed)).not.toThrow();
    expect(clientUrlOrigins(listed)).toEqual(["http://127.0.0.1:11434", "https://models.example"]);
    for (const bad of ["http://models.example/v1", "ftp://models.example", "models.example"])
      expect((await configError(() => readConfig({ BYTESEEK_LLM_CLIENT_URLS: bad }))).message).toContain(
        "BYTESEEK_LLM_CLIENT_URLS lists origins",
      );
  });

  it("reads BYTESEEK_HISTORY as a count or dir=count pairs, and refuses anything else", async () => {
    expect(readConfig({ BYTESEEK_HISTORY: "3" }).store.historyLimit).toBe(3);
    expect(readConfig({ BYTESEEK_HISTORY: "0" }).store.historyLimit).toBe(0);
    expect(readConfig({ BYTESEEK_HISTORY: " /byteseek/=10, /notes/ = 3,/=1" }).store.historyLimit).toEqual({
      "/byteseek/": 10,
      "/notes/": 3,
      "/": 1,
    });
    for (const [text, why] of [
      ["many", '"many" is not a count nor dir/=count (e.g. 10, or /byteseek/=10,/notes/=3)'],
      ["-1", '"-1" is not a count nor dir/=count (e.g. 10, or /byteseek/=10,/notes/=3)'],
      ["2.5", '"2.5" is not a count nor dir/=count (e.g. 10, or /byteseek/=10,/notes/=3)'],
      ["/a=3", '"/a=3" is not a count nor dir/=count (e.g. 10, or /byteseek/=10,/notes/=3)'],
      ["/a/=3,", '"" is not a count nor dir/=count (e.g. 10, or /byteseek/=10,/notes/=3)'],
      ["99999", "the history limit must be a whole number from 0 (keeps none) to 10000, got 99999"],
      [
        "/a/=99999",
        "the history limit of /a/ must be a whole number from 0 (keeps none) to 10000, got 99999",
      ],
    ])
      expect((await configError(() => readConfig({ BYTESEEK_HISTORY: text }))).message).toBe(
        `BYTESEEK_HISTORY: ${why?.startsWith('"') ? `history limit: ${why}` : why}`,
      );
    expect((await configError(() => readConfig({ BYTESEEK_HISTORY: "/a//=3" }))).message).toMatch(
      /^BYTESEEK_HISTORY: history limit: "\/a\/\/" is not a directory key \(/,
    );
  });

  it("reads BYTESEEK_CACHE as a size, 0 turning the cache off, and refuses anything else", async () => {
    expect(readConfig({ BYTESEEK_CACHE: "256m" }).store).toMatchObject({ cacheBytes: 256 * 1024 * 1024 });
    expect(readConfig({ BYTESEEK_CACHE: "0" }).store).toMatchObject({ cacheBytes: 0 });
    for (const size of ["lots", "-1", "1g"])
      expect((await configError(() => readConfig({ BYTESEEK_CACHE: size }))).message).toBe(
        `BYTESEEK_CACHE must be a size in bytes (or with k/m), got ${JSON.stringify(size)}`,
      );
  });

  it("refuses a non-loopback host without a credential (--no-auth), and says why and what to do", async () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.20", "example.org"]) {
      const err = await configError(() =>
        readConfig({ BYTESEEK_HOST: host, BYTESEEK_TOKEN: "" }, "/srv", { noAuth: true }),
      );
      expect(err.message).toContain(`refusing to listen on ${host} without a credential`);
      expect(err.message).toMatch(/anyone who can reach it could read and change the store/);
      expect(err.message).toMatch(/Drop --no-auth \(and BYTESEEK_TOKEN=\), or listen on 127\.0\.0\.1/);
    }
  });

  it("accepts any host with a credential (BYTESEEK_TOKEN or the store's token file), and loopback hosts without one", () => {
    expect(readConfig({ BYTESEEK_HOST: "0.0.0.0", BYTESEEK_TOKEN: "t" })).toMatchObject({
      host: "0.0.0.0",
      token: "t",
      auth: "env",
    });
    expect(readConfig({ BYTESEEK_HOST: "0.0.0.0" })).toMatchObject({ host: "0.0.0.0", auth: "file" });
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost"])
      expect(readConfig({ BYTESEEK_HOST: host, BYTESEEK_TOKEN: "" }, "/srv", { noAuth: true })).toMatchObject(
        {
          host,
          auth: "none",
        },
      );
  });

  it("runs without a credential only with BYTESEEK_TOKEN set and empty and --no-auth together; either alone is refused, saying what to do", async () => {
    expect(readConfig({ BYTESEEK_TOKEN: "" }, "/srv", { noAuth: true }).auth).toBe("none");
    expect((await configError(() => readConfig({ BYTESEEK_TOKEN: "" }))).message).toMatch(
      /BYTESEEK_TOKEN is set but empty: unset it .* or add --no-auth/,
    );
    expect((await configError(() => readConfig({}, "/srv", { noAuth: true }))).message).toMatch(
      /set BYTESEEK_TOKEN to empty as well \(BYTESEEK_TOKEN= byteseek serve --no-auth\)/,
    );
    expect(
      (await configError(() => readConfig({ BYTESEEK_TOKEN: "a-token" }, "/srv", { noAuth: true }))).message,
    ).toMatch(/--no-auth and BYTESEEK_TOKEN contradict each other/);
    expect((await configError(() => readConfig({ BYTESEEK_TOKEN: "two words" }))).message).toMatch(
      /BYTESEEK_TOKEN must be printable characters without spaces/,
    );
    // etcd has no folder to keep a token in: without BYTESEEK_TOKEN, one is made for the start
    expect(readConfig({ KVSPACE: "etcd://127.0.0.1:2379" }).auth).toBe("start");
  });

  it("refuses a port that is not 0-65535, naming the variable and the value", async () => {
    for (const port of ["abc", "65536", "-1", "80.5", "0x50", "123456"]) {
      const err = await configError(() => readConfig({ BYTESEEK_PORT: port }));
      expect(err.message).toBe(`BYTESEEK_PORT must be a port number (0-65535), got ${JSON.stringify(port)}`);
    }
    expect(readConfig({ BYTESEEK_PORT: "0" }).port).toBe(0);
    expect(readConfig({ BYTESEEK_PORT: "65535" }).port).toBe(65_535);
  });

  it("reads BYTESEEK_FAST: 0 the reference lanes, 1 or unset the fast ones, anything else refused", async () => {
    expect(readConfig({ BYTESEEK_FAST: "0" }).fast).toBe(false);
    expect(readConfig({ BYTESEEK_FAST: "1" }).fast).toBe(true);
    expect((await configError(() => readConfig({ BYTESEEK_FAST: "off" }))).message).toBe(
      'BYTESEEK_FAST must be 0 (the libraries\' own paths: the reference lanes) or 1 (the fast lanes, the default), got "off"',
    );
  });

  it("refuses a BYTESEEK_SYNC other than always or never", async () => {
    for (const sync of ["sometimes", "ALWAYS", "1", "true"]) {
      const err = await configError(() => readConfig({ BYTESEEK_SYNC: sync }));
      expect(err.message).toBe(`BYTESEEK_SYNC must be always or never, got ${JSON.stringify(sync)}`);
    }
    expect(readConfig({ BYTESEEK_SYNC: "always" }).store).toMatchObject({ sync: "always" });
  });

  it("reads BYTESEEK_BODY_LIMIT in bytes or with k/m, and refuses anything else", async () => {
    expect(readConfig({ BYTESEEK_BODY_LIMIT: "12k" }).bodyLimit).toBe(12 * 1024);
    expect(readConfig({ BYTESEEK_BODY_LIMIT: "2MiB" }).bodyLimit).toBe(2 * 1024 * 1024);
    expect(readConfig({ BYTESEEK_BODY_LIMIT: "500" }).bodyLimit).toBe(500);
    for (const limit of ["0", "lots", "1g", "-5"])
      expect((await configError(() => readConfig({ BYTESEEK_BODY_LIMIT: limit }))).message).toMatch(
        /^BYTESEEK_BODY_LIMIT must be a size/,
      );
  });

  it("refuses a server URL as the store", async () => {
    const err = await configError(() => readConfig({ KVSPACE: "http://127.0.0.1:7411" }));
    expect(err.message).toMatch(/is a server's URL; the server needs a store folder/);
  });

  it("takes an etcd URL as the store, and refuses settings only the embedded store has", async () => {
    expect(
      readConfig({ KVSPACE: "etcd://10.0.0.1,10.0.0.2:2400/team", BYTESEEK_HISTORY: "2" }).store,
    ).toEqual({
      backend: "etcd",
      endpoints: ["10.0.0.1:2379", "10.0.0.2:2400"],
      prefix: "team/",
      cacheBytes: 32 * 1024 * 1024,
      historyLimit: 2,
    });
    const err = await configError(() =>
      readConfig({ KVSPACE: "etcd://127.0.0.1:2379", BYTESEEK_SYNC: "always" }),
    );
    expect(err.message).toMatch(/^BYTESEEK_SYNC does not apply to a store on etcd .*unset BYTESEEK_SYNC$/);
  });

  it("refuses a KVSPACE that looks like a URL it cannot open, instead of making a folder of it", async () => {
    for (const kvspace of ["htp://x", "etcd:", "etcd://", "etcd:/host", "http://", "s3://bucket/tree"])
      expect((await configError(() => readConfig({ KVSPACE: kvspace }, "/srv"))).message).toMatch(
        /^KVSPACE=/,
      );
  });
});

describe("startServer refusals", () => {
  it("refuses a bad configuration before it opens (or creates) the store", async () => {
    const store = join(dir.path, "store");
    const bad = [{ BYTESEEK_TOKEN: "" }, { BYTESEEK_PORT: "99999" }, { BYTESEEK_SYNC: "sometimes" }];
    for (const env of bad) {
      const err = await configError(() =>
        startServer({ env: { KVSPACE: store, ...env }, logger: silent, handleSignals: false }),
      );
      expect(err.message).toMatch(/BYTESEEK_TOKEN|BYTESEEK_PORT|BYTESEEK_SYNC/);
    }
    expect(existsSync(store)).toBe(false);
  });

  it("closes the store again when it cannot listen (the port is taken)", async () => {
    const first = await startServer({
      env: { KVSPACE: join(dir.path, "one"), BYTESEEK_PORT: "0" },
      logger: silent,
      handleSignals: false,
    });
    try {
      const port = new URL(first.url).port;
      await expect(
        startServer({
          env: { KVSPACE: join(dir.path, "two"), BYTESEEK_PORT: port },
          logger: silent,
          handleSignals: false,
        }),
      ).rejects.toMatchObject({ code: "EADDRINUSE" });
      // Left open, its lock would refuse this.
      const reopened = await openTree({ backend: "classic", location: join(dir.path, "two") });
      await reopened.close();
    } finally {
      await first.close();
    }
  });
});

describe("the workspace", () => {
  it("is a workspace folder the server makes under the current one, never the current folder itself", async () => {
    const server = await startServer({
      env: { KVSPACE: join(dir.path, "data"), BYTESEEK_PORT: "0" },
      cwd: dir.path,
      logger: silent,
      handleSignals: false,
    });
    try {
      const res = await request(`${server.url}/v1/tools/edit.write/call`, {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(server) },
        body: JSON.stringify({ args: { path: "note.txt", text: "hi" } }),
      });
      expect(res.statusCode).toBe(200);
      expect(((await res.body.json()) as { kind: string }).kind).toBe("ok");
      expect(readFileSync(join(dir.path, "workspace", "note.txt"), "utf8")).toBe("hi");
      expect(existsSync(join(dir.path, "note.txt"))).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe("BYTESEEK_HISTORY", () => {
  /** Starts a server with `env`, writes each value in turn to each key, answers each key's history. */
  async function historyAfter(
    env: NodeJS.ProcessEnv,
    keys: string[],
    values: string[],
  ): Promise<Record<string, string[]>> {
    const server = await startServer({
      env: { KVSPACE: join(dir.path, `history-${keys.length}-${values.length}`), BYTESEEK_PORT: "0", ...env },
      logger: silent,
      handleSignals: false,
    });
    try {
      const out: Record<string, string[]> = {};
      for (const key of keys) {
        for (const v of values) {
          const res = await request(`${server.url}/v1/tree/${key}`, {
            method: "PUT",
            headers: { "content-type": "application/json", ...bearer(server) },
            body: JSON.stringify(v),
          });
          expect(res.statusCode).toBe(200);
          await res.body.dump();
        }
        const res = await request(`${server.url}/v1/tree/${key}?history=1`, { headers: bearer(server) });
        const { history } = (await res.body.json()) as { history: Array<{ value: string }> };
        out[key] = history.map((h) => h.value);
      }
      return out;
    } finally {
      await server.close();
    }
  }

  it("keeps none outside /byteseek/ by default", async () => {
    expect(await historyAfter({}, ["h/k", "byteseek/notes/k"], ["one", "two"])).toEqual({
      "h/k": [],
      "byteseek/notes/k": ["one"],
    });
  });

  it("bounds the versions the started server keeps per value", async () => {
    expect(await historyAfter({ BYTESEEK_HISTORY: "1" }, ["h/k"], ["one", "two", "three"])).toEqual({
      "h/k": ["two"],
    });
  });
});

describe("graceful shutdown", () => {
  it("finishes an in-flight request, ends open watches, refuses new work and closes the store", async () => {
    const store = join(dir.path, "store");
    const server = await startServer({
      env: { KVSPACE: store, BYTESEEK_PORT: "0" },
      logger: silent,
      handleSignals: false,
    });
    const watch = await request(`${server.url}/v1/watch/`, { headers: bearer(server) });
    expect(watch.statusCode).toBe(200);
    const watchText = watch.body.text();

    // An import whose body is still arriving when the shutdown starts.
    const body = new PassThrough();
    const arrived = new Promise((resolve) => server.app.server.once("request", resolve));
    const importing = request(`${server.url}/v1/import`, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson", ...bearer(server) },
      body,
    });
    body.write(`${JSON.stringify({ key: "/shut/a", kind: "int64", value: 1 })}\n`);
    await arrived;

    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    // The watch ends (its stream completes) while the import is still open.
    expect(await watchText).toMatch(/event: progress/);
    expect(closed).toBe(false);

    body.end(`${JSON.stringify({ key: "/shut/b", kind: "int64", value: 2 })}\n`);
    const imported = await importing;
    expect(imported.statusCode).toBe(200);
    expect(JSON.parse(await imported.body.text())).toMatchObject({ imported: 2 });
    await closing;

    // No longer listening; the store is closed, so the folder opens again, with the import in it.
    await expect(request(`${server.url}/healthz`)).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await expect(server.tree.get("/shut/a")).rejects.toMatchObject({ code: "TREE_CLOSED" });
    const reopened = await openTree({ backend: "classic", location: store });
    try {
      expect(await reopened.get("/shut/b")).toMatchObject({ kind: "int64" });
    } finally {
      await reopened.close();
    }
  });

  it("says at start which lanes it runs (BYTESEEK_FAST=0: the reference lanes); on SIGTERM logs why, says it stopped, exits 0", async () => {
    const built = join(ROOT, "dist", "server", "main.js");
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` first`);
    const child = spawn(process.execPath, [FIXTURE], {
      env: {
        ...process.env,
        KVSPACE: join(dir.path, "store"),
        BYTESEEK_PORT: "0",
        BYTESEEK_HOST: "127.0.0.1",
        BYTESEEK_FAST: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d) => {
        out += d;
        if (out.includes('{"listening":')) resolve();
      });
      child.once("exit", (code) =>
        reject(new Error(`server exited (${code}) before listening: ${err}${out}`)),
      );
    });
    child.kill("SIGTERM");
    expect(await exited, err).toBe(0);
    const lines = out
      .split("\n")
      .filter((l) => l.startsWith('{"level"'))
      .map((l) => JSON.parse(l) as { msg: string; signal?: string; lanes?: string });
    expect(lines.find((l) => l.msg === "listening")?.lanes).toBe("reference (BYTESEEK_FAST=0)");
    expect(lines.find((l) => l.msg === "shutting down")?.signal).toBe("SIGTERM");
    expect(lines.at(-1)?.msg).toBe("stopped");
  });
});
