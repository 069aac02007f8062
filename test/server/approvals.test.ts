import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { type App, buildApp } from "../../server/app.js";
import { readSse } from "../../shared/sse.js";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type Json, json } from "../../tree/value.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "../agent/stack.js";
import { cliEnv } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { silent, tempDir } from "../tools/helpers.js";

interface Event {
  event: string;
  data: Record<string, unknown>;
}

describe("approvals through the HTTP agent turn", () => {
  let fake: FakeLlm;
  let tree: Tree;
  let bs: Byteseek;
  let app: App;
  let url: string;
  let workspace: string;

  let stack: AgentStack;
  beforeEach(async () => {
    stack = await startAgentStack("byteseek-approvals-http-");
    ({ workspace, fake, tree, bs } = stack);
    app = await buildApp({ tree, logger: silent, runtime: bs.runtime, agent: bs.agent, web: false });
    url = await app.listen({ host: "127.0.0.1", port: 0 });
    // A person makes shell.run ask first.
    const node = await tree.get("/byteseek/tools/shell.run");
    const decl = node?.kind === "json" ? (node.value.value as Record<string, Json>) : {};
    await tree.set("/byteseek/tools/shell.run", json({ ...decl, confirm: true }));
  });
  afterEach(async () => {
    await app.close();
    await stopAgentStack(stack);
  });

  /** Starts a streamed turn; `events` fills as they come, `pending` resolves at the first approval_pending. */
  async function streamTurn(vid: string, input: string) {
    const events: Event[] = [];
    let onPending: (e: Event) => void = () => undefined;
    const pending = new Promise<Event>((res) => {
      onPending = res;
    });
    const res = await request(`${url}/v1/agent/turn`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ vid, input }),
    });
    expect(res.statusCode).toBe(200);
    const done = (async () => {
      for await (const ev of readSse(res.body)) {
        const e = { event: ev.event ?? "message", data: JSON.parse(ev.data) as Record<string, unknown> };
        events.push(e);
        if (e.event === "approval_pending") onPending(e);
      }
      return events;
    })();
    return { pending, done };
  }

  const idOf = (e: Event) => String(e.data.key).replace("/byteseek/approval/", "");

  it("keeps a call approved with approve: true as an approval decided by its caller, naming the credential; kvspace approvals <id> shows it", async () => {
    const res = await request(`${url}/v1/tools/shell.run/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: { command: "true" }, vid: "ap3", approve: true }),
    });
    const result = (await res.body.json()) as { kind: string; details: { record?: string } };
    expect(result.kind).toBe("ok");
    const entry = await tree.get("/byteseek/approval/ap3/0");
    expect(entry?.kind === "json" && entry.value.value).toMatchObject({
      state: "approved",
      tool: "shell.run",
      // this app runs without a credential; with one, "bearer token sha256:…" (server/auth.ts)
      decision: { scope: "once", by: "person (http)", via: "no credential (the server runs with --no-auth)" },
    });
    const record = await tree.get("/byteseek/tool/ap3/0");
    expect(record?.kind === "json" && record.value.value).toMatchObject({
      approval: "/byteseek/approval/ap3/0",
    });
    const cli = await runInProcess(["approvals", "ap3/0"], { env: cliEnv(url) });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain("ap3/0\tshell.run\tapproved\n");
    expect(cli.stdout).toContain("  decided: approved once by person (http) via no credential (the server");
  });

  it("waits, says so on the stream, and runs the call once approved from the CLI over HTTP", async () => {
    fake.script(
      { toolCalls: [{ name: "shell.run", args: { command: "touch approved.txt" } }] },
      { text: "done" },
    );
    const turn = await streamTurn("ap1", "make the file");
    const pending = await turn.pending;
    expect(pending.data).toMatchObject({ name: "shell.run", key: "/byteseek/approval/ap1/0" });
    expect(existsSync(join(workspace, "approved.txt"))).toBe(false);
    const status = await request(`${url}/v1/tree/vthread/ap1/status`);
    expect(((await status.body.json()) as { value: string }).value).toBe("waiting /byteseek/approval/ap1/0");
    const listed = await request(`${url}/v1/approvals`);
    const body = (await listed.body.json()) as { pending: Array<{ key: string }> };
    expect(body.pending.map((p) => p.key)).toEqual(["/byteseek/approval/ap1/0"]);

    const cli = await runInProcess(["approve", idOf(pending)], { env: cliEnv(url) });
    expect(cli).toMatchObject({ code: 0, stdout: "/byteseek/approval/ap1/0\tapproved\tshell.run\n" });
    const events = await turn.done;
    const result = events.find((e) => e.event === "tool_result");
    expect(result?.data).toMatchObject({ name: "shell.run", kind: "ok" });
    expect(existsSync(join(workspace, "approved.txt"))).toBe(true);
    const record = await tree.get(String(result?.data.record));
    expect(record?.kind === "json" && record.value.value).toMatchObject({
      approval: "/byteseek/approval/ap1/0",
    });
  });

  it("a denial from the CLI answers denied to the model, and nothing ran", async () => {
    fake.script(
      { toolCalls: [{ name: "shell.run", args: { command: "touch denied.txt" } }] },
      { text: "ok" },
    );
    const turn = await streamTurn("ap2", "make the file");
    const pending = await turn.pending;
    const cli = await runInProcess(["deny", idOf(pending), "--reason", "not today"], { env: cliEnv(url) });
    expect(cli.code).toBe(0);
    const events = await turn.done;
    expect(events.find((e) => e.event === "tool_result")?.data).toMatchObject({ kind: "denied" });
    expect(String(events.find((e) => e.event === "tool_result")?.data.text)).toContain("not today");
    expect(existsSync(join(workspace, "denied.txt"))).toBe(false);
    // A second decision is refused with 409, the entry unchanged.
    const again = await request(`${url}/v1/approvals/ap2/0`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    expect(again.statusCode).toBe(409);
    expect(((await again.body.json()) as { error: { code: string } }).error.code).toBe("APPROVAL_DECIDED");
  });

  it("denies with no answer after policy.approvalTimeoutMs", async () => {
    const node = await tree.get(POLICY_KEY);
    const policy = node?.kind === "json" ? (node.value.value as Record<string, Json>) : {};
    await tree.set(POLICY_KEY, json({ ...policy, approvalTimeoutMs: 300 }), { ro: true, force: true });
    fake.script({ toolCalls: [{ name: "shell.run", args: { command: "touch late.txt" } }] }, { text: "ok" });
    const turn = await streamTurn("ap3", "make the file");
    await turn.pending;
    const events = await turn.done;
    const result = events.find((e) => e.event === "tool_result");
    expect(result?.data).toMatchObject({ kind: "denied" });
    expect(String(result?.data.text)).toContain("no answer");
    expect(existsSync(join(workspace, "late.txt"))).toBe(false);
  });

  it("refuses a malformed decision or an unknown approval with a 4xx", async () => {
    const bad = await request(`${url}/v1/approvals/ap9/0`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "maybe" }),
    });
    expect(bad.statusCode).toBe(400);
    await bad.body.dump();
    const missing = await request(`${url}/v1/approvals/ap9/0`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    expect(missing.statusCode).toBe(404);
    await missing.body.dump();
    const cli = await runInProcess(["approve", "not-an-id"], { env: cliEnv(url) });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("does not name an approval");
  });
});

describe("self-extension with the shipped defaults", () => {
  it("turn 1 declares a shell tool with tree.set, turn 2 is offered it and calls it", async () => {
    const dir = await tempDir("byteseek-selfext-");
    const fake = await startFakeLlm();
    const tree = await openTree({ backend: "classic", location: join(dir.path, "db") });
    const workspace = join(dir.path, "ws");
    await mkdir(workspace);
    const bs = await createByteseek({
      tree,
      workspace,
      logger: silent,
      env: { BYTESEEK_LLM_API: "openai", BYTESEEK_LLM_URL: `${fake.url}/v1`, BYTESEEK_LLM_MODEL: "fake-1" },
    });
    try {
      const wc = {
        name: "text.wc",
        description: "Count the words of a text",
        snippet: "text.wc(text) — count words",
        params: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        impl: { kind: "shell", argv: ["sh", "-c", 'printf "%s" "$0" | wc -w', "{text}"] },
      };
      fake.script(
        { toolCalls: [{ name: "tree.set", args: { key: "/byteseek/tools/text.wc", value: wc } }] },
        {
          text: "declared",
        },
      );
      const t1 = await bs.agent.runTurn({ vid: "ext", input: "make a word counter" });
      expect(t1.calls).toEqual([expect.objectContaining({ name: "tree.set", kind: "ok" })]);
      fake.script(
        { toolCalls: [{ name: "text.wc", args: { text: "one two three four" } }] },
        { text: "4 words" },
      );
      const t2 = await bs.agent.runTurn({ vid: "ext", input: "count: one two three four" });
      expect((fake.requests[2]?.tools ?? []).map((t) => t.name)).toContain("text_wc");
      expect(t2.calls).toEqual([expect.objectContaining({ name: "text.wc", kind: "ok" })]);
      const fed = fake.requests[3]?.messages.at(-1);
      expect(fed?.role === "tool" ? fed.text.trim() : "").toBe("4");
    } finally {
      await bs.close();
      await tree.close();
      await fake.close();
      await dir.remove();
    }
  });
});
