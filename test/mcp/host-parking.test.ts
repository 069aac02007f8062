/**
 * The parking of 2026-era MCP host calls (mcp/host-parking.ts): one session may park at most
 * MAX_PARKED_PER_SESSION calls, so a host holding its whole share leaves room for the others.
 */
import { describe, expect, it } from "vitest";
import { createParking, MAX_PARKED_PER_SESSION, type ParkedStep } from "../../mcp/host-parking.js";
import type { HostAsker } from "../../tools/gate/asks.js";
import type { ToolResult } from "../../tools/types.js";

const who = { by: "person (MCP host test)", via: "MCP elicitation of session test" };
const question = { server: "up", message: "Your name?", schema: { type: "object", properties: {} } };

/** A call whose upstream asks its host one question and answers what the host said (or why it could not ask). */
const asking = async (askHost: HostAsker, signal: AbortSignal): Promise<ToolResult> => {
  try {
    const answer = await askHost.ask(question, { approval: "a", signal, timeoutMs: 10_000 });
    return { kind: "ok", isError: false, text: `answered ${answer.action}`, details: {} };
  } catch (err) {
    return { kind: "runtime", isError: true, text: (err as Error).message, details: {} };
  }
};

describe("parking 2026-era host calls", () => {
  it("keeps at most MAX_PARKED_PER_SESSION calls of one session, says why to the next, and still parks another session's", async () => {
    const parking = createParking();
    const never = new AbortController().signal;
    const held: Array<{ step: ParkedStep; call: string }> = [];
    for (let i = 0; i < MAX_PARKED_PER_SESSION; i++) {
      const call = `a${i}`;
      held.push({ step: await parking.start("sess-a", call, "up.ask", who, asking, never), call });
      expect(held.at(-1)?.step).toMatchObject({ ask: { message: expect.any(String) } });
    }
    // one more of the same session runs unparked: its question is not put to the host, saying why
    const over = await parking.start("sess-a", "a-over", "up.ask", who, asking, never);
    expect(over).toMatchObject({ result: { isError: true } });
    expect("result" in over && over.result.text).toContain(
      `this MCP session already has ${MAX_PARKED_PER_SESSION} calls that may wait for its answers`,
    );

    // another session is not denied
    const other = await parking.start("sess-b", "b0", "up.ask", who, asking, never);
    expect("park" in other).toBe(true);
    if (!("park" in other)) return;
    expect(await parking.resume(other.park, "b0", { action: "decline" }, never)).toMatchObject({
      result: { text: "answered decline" },
    });

    // the session's calls answered, its places are free again
    for (const { step, call } of held)
      if ("park" in step)
        expect(await parking.resume(step.park, call, { action: "cancel" }, never)).toMatchObject({
          result: { text: "answered cancel" },
        });
    expect(await parking.start("sess-a", "a-again", "up.ask", who, asking, never)).toHaveProperty("park");
  });
});
