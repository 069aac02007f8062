import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isToolError } from "../../tools/errors.js";
import { parseEntry } from "../../tools/mcp/registry.js";
import { createUpstreamPool, type UpstreamPool, unsandboxedLaunch } from "../../tools/mcp/upstream.js";
import { alive } from "../helpers/processes.js";
import { silent, tempDir } from "../tools/helpers.js";
import { everythingStdio, newTag, taggedProcesses, until } from "./helpers.js";

/**
 * Every way a start can meet a stop: a call waiting out a crash's backoff, two calls waiting it out
 * together, a stop or close() during the handshake, a new entry revision racing close(). Each ends
 * with no process of the upstream alive once the pool is closed.
 */
describe("the MCP upstream pool: a start racing a stop, a crash or close", () => {
  const SERVER = "everything";
  let pool: UpstreamPool;
  let tag: string;
  let remove: () => Promise<void>;
  const seen = new Set<number>();

  function entry() {
    const parsed = parseEntry(everythingStdio(tag));
    if (!parsed.ok) throw new Error(parsed.problems.join("; "));
    return parsed.entry;
  }

  /** The running pid, remembered so the test can check it is gone at the end. */
  function pid(): number {
    const p = pool.status(SERVER).pid;
    if (p === undefined) throw new Error("no process running");
    seen.add(p);
    return p;
  }

  beforeEach(async () => {
    tag = newTag();
    seen.clear();
    const ws = await tempDir("byteseek-mcp-race-");
    remove = ws.remove;
    // the pool's own state machine: its processes start as given (the sandbox is upstream-sandbox.ts's)
    pool = createUpstreamPool({
      logger: silent,
      workspace: ws.path,
      env: process.env,
      launch: unsandboxedLaunch,
      connect: async () => {
        throw new Error("these tests start stdio servers only");
      },
    });
  });
  afterEach(async () => {
    await pool.close();
    // close() returns once the processes are gone: none may be running, nor start later
    for (const p of await taggedProcesses(tag)) seen.add(p);
    await new Promise((r) => setTimeout(r, 300));
    expect([...seen].filter(alive)).toEqual([]);
    expect(await taggedProcesses(tag)).toEqual([]);
    await remove();
  });

  async function crashed(): Promise<number> {
    await pool.client(SERVER, entry(), 1, 30_000);
    const first = pid();
    process.kill(first, "SIGKILL");
    await until(() => pool.status(SERVER).state === "backoff");
    return first;
  }

  it("refuses a call waiting out a crash's backoff when the pool closes, and starts nothing after", async () => {
    await crashed();
    // its refusal is taken as it comes (it may come while close() is still under way)
    const waiting = pool.client(SERVER, entry(), 1, 30_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    await pool.close();
    const err = await waiting;
    expect(isToolError(err) && err.code).toBe("mcp_unavailable");
    expect((err as Error).message).toContain("byteseek is stopping");
  });

  it("starts one process for two calls waiting out the same backoff", async () => {
    const first = await crashed();
    const [a, b] = await Promise.all([
      pool.client(SERVER, entry(), 1, 30_000),
      pool.client(SERVER, entry(), 1, 30_000),
    ]);
    expect(a).toBe(b);
    const restarted = pid();
    expect(restarted).not.toBe(first);
    expect(await taggedProcesses(tag)).toEqual([restarted]);
  });

  it("ends a start that a stop overtakes during its handshake; the next call starts anew", async () => {
    // its refusal is taken as it comes (it may come while stop() is still under way)
    const starting = pool.client(SERVER, entry(), 1, 30_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(pool.status(SERVER).state).toBe("starting");
    await pool.stop(SERVER);
    const err = await starting;
    expect((err as Error | undefined)?.message).toContain("was stopped while it started");
    expect(pool.status(SERVER).state).toBe("stopped");
    expect(await taggedProcesses(tag)).toEqual([]);
    await pool.client(SERVER, entry(), 1, 30_000);
    expect(pool.status(SERVER).state).toBe("running");
    pid();
  });

  it("starts nothing for a new entry revision when close() comes while the old one stops", async () => {
    await pool.client(SERVER, entry(), 1, 30_000);
    pid();
    // its refusal is taken as it comes (it may come while close() is still under way)
    const replacing = pool.client(SERVER, entry(), 2, 30_000).then(
      () => undefined,
      () => undefined,
    );
    await pool.close();
    await replacing;
    // whatever the call answered, no process of the new revision may run past close()
    expect(await taggedProcesses(tag)).toEqual([]);
  });
});
