/**
 * The runs over HTTP, as the web page reads them: the listing filtered by status, id and tool and
 * paged, MCP host sessions listed with their client; one run's page facts (model, grant, waiting);
 * and a replay kept as a run of its own — no model request, no tool run unless liveTools — that
 * compares equal to the run it replays. Real loop, fake model, classic-level tree, in process.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLeases } from "../../agent/lease.js";
import { sessionDir, statusKey } from "../../agent/run-keys.js";
import type { Byteseek } from "../../compose/byteseek.js";
import { liveReplayTools } from "../../compose/replay-tools.js";
import type { App } from "../../server/app.js";
import { buildApp } from "../../server/app.js";
import type { Tree } from "../../tree/types.js";
import { json, str } from "../../tree/value.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "../agent/stack.js";
import type { FakeLlm } from "../fake-llm/server.js";
import { silent } from "../tools/helpers.js";

let stack: AgentStack | undefined;
let fake: FakeLlm;
let tree: Tree;
let bs: Byteseek;
let workspace: string;
let app: App;

const get = async (url: string) => {
  const res = await app.inject({ method: "GET", url });
  return {
    status: res.statusCode,
    body: res.json() as Record<string, unknown> & { runs?: Array<Record<string, unknown>> },
  };
};
const vids = (body: { runs?: Array<Record<string, unknown>> }) => (body.runs ?? []).map((r) => r.vid);

beforeAll(async () => {
  stack = await startAgentStack("byteseek-runs-routes-");
  ({ workspace, fake, tree, bs } = stack);
  app = await buildApp({
    tree: bs.tree,
    logger: silent,
    runtime: bs.runtime,
    agent: bs.agent,
    web: false,
    replayLive: liveReplayTools({ workspace, logger: silent }),
  });
  await writeFile(join(workspace, "a.txt"), "x = 1\n");
  fake.script(
    { text: "Reading.", toolCalls: [{ name: "edit.read", args: { path: "a.txt" } }] },
    { text: "Writing.", toolCalls: [{ name: "edit.write", args: { path: "b.txt", text: "made\n" } }] },
    { text: "a.txt says x = 1; b.txt is made." },
  );
  expect((await bs.agent.runTurn({ vid: "job-a", input: "read a, make b" })).reason).toBe("done");
  fake.script({ text: "hello" });
  expect((await bs.agent.runTurn({ vid: "job-b", input: "say hello" })).reason).toBe("done");
  fake.script({ text: "hi" });
  expect((await bs.agent.runTurn({ vid: "other-c", input: "say hi" })).reason).toBe("done");
  // an MCP host's session: calls, a client, no turn loop
  await tree.set(
    "/vthread/mcp-claude-1/client",
    json({ name: "claude", version: "2.1", transport: "stdio", ts: 1 }),
    {
      vid: "mcp-claude-1",
    },
  );
  await bs.runtime.call("tree.get", { key: "/nothing" }, { vid: "mcp-claude-1" });
  await tree.append(sessionDir("stuck"), json({ role: "user", content: "go" }), { vid: "stuck" });
  await tree.set(statusKey("stuck"), str("running"), { vid: "stuck" });
});

afterAll(async () => {
  await app?.close();
  if (stack) await stopAgentStack(stack);
});

describe("GET /v1/agent/runs", () => {
  it("lists the newest run first, a page at a time in that order", async () => {
    const newestFirst = ["stuck", "mcp-claude-1", "other-c", "job-b", "job-a"];
    expect(vids((await get("/v1/agent/runs")).body)).toEqual(newestFirst);
    const first = await get("/v1/agent/runs?limit=2");
    expect(vids(first.body)).toEqual(newestFirst.slice(0, 2));
    const second = await get(`/v1/agent/runs?limit=2&after=${encodeURIComponent(String(first.body.next))}`);
    expect(vids(second.body)).toEqual(newestFirst.slice(2, 4));
    const third = await get(`/v1/agent/runs?limit=2&after=${encodeURIComponent(String(second.body.next))}`);
    expect(vids(third.body)).toEqual(["job-a"]);
    expect(third.body.next).toBeUndefined();
    // a run deleted after its page was shown does not lose the place
    await tree.set(statusKey("gone-1"), str("done"), { vid: "gone-1" });
    const top = await get("/v1/agent/runs?limit=1");
    expect(vids(top.body)).toEqual(["gone-1"]);
    await tree.deltree("/vthread/gone-1/");
    const after = await get(`/v1/agent/runs?limit=1&after=${encodeURIComponent(String(top.body.next))}`);
    expect(vids(after.body)).toEqual(["stuck"]);
  });

  it("filters by id substring and by a tool the run called, and pages with next", async () => {
    expect(vids((await get("/v1/agent/runs?vid=job")).body)).toEqual(["job-b", "job-a"]);
    const byTool = await get("/v1/agent/runs?tool=edit.wr");
    expect(vids(byTool.body)).toEqual(["job-a"]);
    expect(byTool.body.runs?.[0]?.tools).toEqual(expect.arrayContaining(["edit.read", "edit.write"]));
    const first = await get("/v1/agent/runs?limit=2");
    expect(vids(first.body)).toHaveLength(2);
    const rest = await get(`/v1/agent/runs?limit=10&after=${encodeURIComponent(String(first.body.next))}`);
    expect([...vids(first.body), ...vids(rest.body)].sort()).toEqual(
      ["job-a", "job-b", "mcp-claude-1", "other-c", "stuck"].sort(),
    );
    expect(rest.body.next).toBeUndefined();
    expect(vids((await get("/v1/agent/runs?status=interrupted&vid=st")).body)).toEqual(["stuck"]);
  });

  it("lists an MCP host's session as a session run with its client's name", async () => {
    const listed = await get("/v1/agent/runs?status=session");
    expect(listed.body.runs).toEqual([
      expect.objectContaining({
        vid: "mcp-claude-1",
        status: "session",
        calls: 1,
        tools: ["tree.get"],
        client: { name: "claude", version: "2.1", transport: "stdio" },
      }),
    ]);
  });
});

describe("GET /v1/agent/runs/<vid>", () => {
  it("answers the run's model, steps, tokens, tools and grant; 404 for no such run", async () => {
    const { status, body } = await get("/v1/agent/runs/job-a");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      vid: "job-a",
      status: "done",
      model: "fake-1",
      steps: 3,
      calls: 2,
      messages: 6,
      reason: "done",
      grant: { rule: "grants.default", powers: { read: true, write: true } },
    });
    expect((body.tokens as { input: number }).input).toBeGreaterThan(0);
    const missing = await get("/v1/agent/runs/nosuch");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: "AGENT_RUN_NOT_FOUND" } });
  });

  it("names the call in progress by its started record while the run runs, and none once it is done", async () => {
    const leases = createLeases(tree, silent);
    await leases.acquire("busy");
    try {
      await tree.append(sessionDir("busy"), json({ role: "user", content: "go" }), { vid: "busy" });
      await tree.set(statusKey("busy"), str("running"), { vid: "busy" });
      const record = { name: "shell.run", args: {}, kind: "runtime", isError: true, text: "", details: {} };
      const { key } = await tree.append(
        "/byteseek/tool/busy/",
        json({ ...record, ts: 1, ms: 0, state: "started" }),
        { vid: "busy" },
      );
      expect((await get("/v1/agent/runs/busy")).body).toMatchObject({ status: "running", inProgress: key });
      await tree.set(key, json({ ...record, ts: 1, ms: 5, state: "done" }), { vid: "busy" });
      expect((await get("/v1/agent/runs/busy")).body.inProgress).toBeUndefined();
    } finally {
      await leases.release("busy");
    }
  });
});

describe("POST /v1/agent/runs/<vid>/replay", () => {
  it("keeps a recorded replay as a new run that runs nothing and compares equal to the original", async () => {
    const asked = fake.requests.length;
    await writeFile(join(workspace, "b.txt"), "changed since\n");
    const res = await app.inject({ method: "POST", url: "/v1/agent/runs/job-a/replay", payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      vid: "job-a.replay-1",
      of: "job-a",
      live: false,
      steps: 3,
      calls: 2,
      executed: 0,
      modelRequests: 0,
    });
    expect(res.json().divergence).toBeUndefined();
    expect(fake.requests.length).toBe(asked);
    expect(await readFile(join(workspace, "b.txt"), "utf8")).toBe("changed since\n");
    const saved = await get("/v1/agent/runs/job-a.replay-1");
    expect(saved.body).toMatchObject({
      status: "done",
      steps: 3,
      replayOf: { of: "job-a", live: false, executed: 0 },
    });
    const diff = await get("/v1/agent/runs/job-a/diff/job-a.replay-1");
    expect(diff.body).toMatchObject({ identical: true });
    // a second replay gets the next id
    const again = await app.inject({ method: "POST", url: "/v1/agent/runs/job-a/replay", payload: {} });
    expect(again.json()).toMatchObject({ vid: "job-a.replay-2" });
  });

  it("runs the tools again with liveTools and stops where a result differs", async () => {
    await writeFile(join(workspace, "a.txt"), "x = 2\n");
    const res = await app.inject({
      method: "POST",
      url: "/v1/agent/runs/job-a/replay",
      payload: { liveTools: true },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ live: true, executed: 1, divergence: { kind: "result", call: 1 } });
    expect((await get(`/v1/agent/runs/${res.json().vid}`)).body).toMatchObject({
      replayOf: { of: "job-a", live: true, diverged: expect.any(String) },
    });
  });

  it("refuses a run that has not finished (409) and one that never was (404)", async () => {
    const stuck = await app.inject({ method: "POST", url: "/v1/agent/runs/stuck/replay", payload: {} });
    expect(stuck.statusCode).toBe(409);
    expect(stuck.json()).toMatchObject({ error: { code: "AGENT_RUN_NOT_FINISHED" } });
    const none = await app.inject({ method: "POST", url: "/v1/agent/runs/nosuch/replay", payload: {} });
    expect(none.statusCode).toBe(404);
  });
});
