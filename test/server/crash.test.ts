import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerChild, startServerChild } from "../tools/server-child.js";
import { tempDir } from "./helpers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const ROUNDS = 5;
const CLIENTS = 32;

function startServer(store: string): Promise<ServerChild> {
  // about crashes, not the credential: BYTESEEK_TOKEN= with --no-auth
  return startServerChild({ KVSPACE: store, BYTESEEK_TOKEN: "" }, ["--no-auth"]);
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

describe("crash safety", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    // The server runs as a child process from dist/ (`npm test` builds it before vitest runs).
    const built = join(ROOT, "dist", "server", "main.js");
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` first`);
    dir = await tempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it(`keeps every write answered 2xx when the server is killed with SIGKILL under 32 writers (${ROUNDS} rounds)`, async () => {
    const acked = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const { child, url } = await startServer(dir.path);
      const pool = new Pool(url, { connections: CLIENTS });
      let stop = false;
      let answered = 0;
      const writers = Array.from({ length: CLIENTS }, async (_, c) => {
        for (let n = 0; !stop; n++) {
          const key = `/crash/${round}/${c}/${n}`;
          try {
            const res = await pool.request({
              method: "PUT",
              path: `/v1/tree${key}`,
              headers: { "content-type": "application/json" },
              body: JSON.stringify(n),
            });
            await res.body.text();
            if (res.statusCode >= 200 && res.statusCode < 300) {
              acked.set(key, n);
              answered++;
            }
          } catch {
            return; // the server is gone
          }
        }
      });
      // Kill it mid-stream, once every round has seen real traffic.
      while (answered < 100) await new Promise((r) => setTimeout(r, 5));
      await kill9(child);
      stop = true;
      await Promise.all(writers);
      await pool.destroy();
    }
    // One last start: every acknowledged write of every round must be there.
    const { child, url } = await startServer(dir.path);
    const pool = new Pool(url, { connections: 8 });
    try {
      const res = await pool.request({ method: "GET", path: "/v1/export/crash/" });
      const present = new Map<string, unknown>();
      for (const line of (await res.body.text()).split("\n")) {
        if (line === "") continue;
        const e = JSON.parse(line) as { key: string; value?: unknown };
        present.set(e.key, e.value);
      }
      const missing = [...acked].filter(([k, v]) => present.get(k) !== v);
      expect(acked.size).toBeGreaterThanOrEqual(ROUNDS * 100);
      expect(missing).toEqual([]);
    } finally {
      await pool.close();
      await kill9(child);
    }
  }, 120_000);
});
