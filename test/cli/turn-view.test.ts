import { describe, expect, it } from "vitest";
import type { AgentEvent, TurnResult } from "../../agent/events.js";
import { canSpin, createTurnView, summary, wantsColor } from "../../cli/turn-view.js";

/** A view writing into a string, with a clock and a spinner ticker the test moves by hand. */
function harness(options: { color?: boolean; spinner?: boolean; resultLines?: number } = {}) {
  let screen = "";
  let clock = 1000;
  const tickers = new Set<() => void>();
  const view = createTurnView({
    out: { write: (t: string) => (screen += t) },
    color: options.color ?? false,
    spinner: options.spinner ?? false,
    now: () => clock,
    ticker(fn) {
      tickers.add(fn);
      return () => tickers.delete(fn);
    },
    ...(options.resultLines ? { resultLines: options.resultLines } : {}),
  });
  return {
    view,
    play: (...events: AgentEvent[]) => {
      for (const e of events) view.onEvent(e);
    },
    advance(ms: number) {
      clock += ms;
    },
    tick() {
      for (const fn of tickers) fn();
    },
    spinning: () => tickers.size > 0,
    screen: () => screen,
  };
}

function result(over: Partial<TurnResult> = {}): TurnResult {
  return {
    vid: "v1",
    text: "done",
    reason: "done",
    steps: 2,
    calls: [{ name: "edit.read", kind: "ok", isError: false, record: "/byteseek/tool/v1/0" }],
    records: ["/byteseek/tool/v1/0"],
    usage: { inputTokens: 1234, outputTokens: 56 },
    ...over,
  };
}

const call = { id: "c1", name: "edit.read" };

describe("the turn view", () => {
  it("prints the answer, each call with its arguments, kind, time and first lines, and the totals", () => {
    const h = harness();
    h.play(
      { type: "turn_start", vid: "v1" },
      { type: "step", step: 1 },
      { type: "text_delta", delta: "Reading" },
      { type: "text_delta", delta: " it." },
      { type: "toolcall_start", index: 0, id: "c1", name: "edit.read" },
      { type: "toolcall_delta", index: 0, delta: '{"path":"a.txt"}' },
      { type: "tool_start", ...call, args: { path: "a.txt" } },
    );
    h.advance(42);
    h.play(
      {
        type: "tool_result",
        ...call,
        kind: "ok",
        isError: false,
        text: "1\tone\n2\ttwo\n3\tthree\n4\tfour\n5\tfive\n",
        record: "/byteseek/tool/v1/0",
      },
      { type: "step", step: 2 },
      { type: "text_delta", delta: "It counts to five." },
      { type: "turn_end", result: result() },
    );
    expect(h.screen()).toBe(
      [
        "Reading it.",
        '→ edit.read {"path":"a.txt"}',
        "  ✓ ok in 42 ms · /byteseek/tool/v1/0",
        "  │ 1\tone",
        "  │ 2\ttwo",
        "  │ 3\tthree",
        "  │ … 2 more lines",
        "It counts to five.",
        "(2 steps · 1 tool call · 1234 tokens in, 56 out)",
        "",
      ].join("\n"),
    );
  });

  it("shows a failed call's kind and message, shortens long lines and long arguments", () => {
    const h = harness({ resultLines: 1 });
    h.play(
      { type: "tool_start", ...call, args: { path: "x".repeat(300) } },
      {
        type: "tool_result",
        ...call,
        kind: "runtime",
        isError: true,
        text: `no such file ${"y".repeat(200)}`,
      },
    );
    const lines = h.screen().split("\n");
    expect(lines[0]).toHaveLength(2 + "edit.read ".length + 160);
    expect(lines[0]?.endsWith("…")).toBe(true);
    expect(lines[1]).toBe("  ✗ runtime in 0 ms");
    expect(lines[2]).toMatch(/^ {2}│ no such file y+…$/);
    expect(lines[2]).toHaveLength(4 + 120);
  });

  it("writes no escape codes without colour and spinner", () => {
    const h = harness();
    h.play(
      { type: "step", step: 1 },
      { type: "toolcall_start", index: 0, id: "c1", name: "edit.read" },
      { type: "tool_start", ...call, args: {} },
      { type: "tool_result", ...call, kind: "ok", isError: false, text: "fine" },
      { type: "turn_end", result: result() },
    );
    expect(h.spinning()).toBe(false);
    expect(h.screen()).not.toMatch(/[\x1b\r]/);
  });

  it("colours the arrow, the kind and the details on a terminal", () => {
    const h = harness({ color: true });
    h.play(
      { type: "tool_start", ...call, args: { path: "a" } },
      { type: "tool_result", ...call, kind: "ok", isError: false, text: "fine" },
      { type: "tool_start", ...call, args: { path: "b" } },
      { type: "tool_result", ...call, kind: "denied", isError: true, text: "no" },
    );
    expect(h.screen()).toContain("\x1b[32m✓ ok\x1b[0m");
    expect(h.screen()).toContain("\x1b[31m✗ denied\x1b[0m");
    expect(h.screen()).toContain("\x1b[1medit.read\x1b[0m");
    expect(h.screen().replace(/\x1b\[\d+m/g, "")).toContain('→ edit.read {"path":"a"}\n  ✓ ok in 0 ms\n');
  });

  it("spins with the tool's name while the model writes a call, and clears the line before printing", () => {
    const h = harness({ spinner: true });
    h.play({ type: "step", step: 1 });
    expect(h.screen()).toBe("\r\x1b[K⠋ waiting for the model");
    h.tick();
    expect(h.screen().endsWith("\r\x1b[K⠙ waiting for the model")).toBe(true);
    h.play({ type: "toolcall_start", index: 0, id: "c1", name: "edit.write" });
    expect(h.screen().endsWith("edit.write: the model is writing the call")).toBe(true);
    const before = h.screen();
    h.play({ type: "toolcall_delta", index: 0, delta: "x".repeat(2048) });
    expect(h.screen()).toBe(before); // the size waits for the next frame
    h.tick();
    expect(h.screen().endsWith("⠹ edit.write: the model is writing the call (2.0 KB)")).toBe(true);
    h.play({ type: "tool_start", id: "c1", name: "edit.write", args: { path: "a" } });
    expect(h.screen().endsWith('\r\x1b[K→ edit.write {"path":"a"}\n\r\x1b[K⠋ running edit.write')).toBe(true);
    h.play({ type: "tool_result", id: "c1", name: "edit.write", kind: "ok", isError: false, text: "" });
    expect(h.screen().endsWith("\r\x1b[K  ✓ ok in 0 ms\n")).toBe(true);
    expect(h.spinning()).toBe(false);
  });

  it("puts the spinner on a line of its own after text that did not end a line", () => {
    const h = harness({ spinner: true });
    h.play(
      { type: "text_delta", delta: "Let me look" },
      { type: "toolcall_start", index: 0, id: "c1", name: "edit.read" },
    );
    expect(h.screen()).toBe("Let me look\n\r\x1b[K⠋ edit.read: the model is writing the call");
    h.view.pause();
    expect(h.spinning()).toBe(false);
    expect(h.screen().endsWith("\r\x1b[K")).toBe(true);
  });

  it("stops the spinner for an approval question and says how to decide elsewhere", () => {
    const h = harness({ spinner: true });
    h.play(
      { type: "tool_start", id: "c1", name: "shell.run", args: { command: "ls" } },
      {
        type: "approval_pending",
        id: "c1",
        name: "shell.run",
        key: "/byteseek/approval/v1/0",
        args: { command: "ls" },
        reason: "shell.run needs confirmation\nmore",
      },
    );
    expect(h.spinning()).toBe(false);
    expect(h.screen()).toContain(
      "\r\x1b[K  waiting for approval /byteseek/approval/v1/0: shell.run needs confirmation\n" +
        '  args: {"command":"ls"}\n' +
        "  decide with: kvspace approve v1/0 [--scope once|run|always]  |  kvspace deny v1/0\n",
    );
  });

  it("shows what an approval would run, who declared it and its hash, with hostile characters spelled out", () => {
    const h = harness();
    const hostile = "notes.md\r\x1b[2K[y]approved\u202egpj.exe\b\u009b2J";
    h.play({
      type: "approval_pending",
      id: "c1",
      name: "text.wc",
      key: "/byteseek/approval/v1/0",
      args: { path: hostile },
      reason: "text.wc needs a person's approval (rule: declaration.confirm)",
      effect: { kind: "shell", argv: ["wc", "-w", hostile], text: `wc -w '${hostile}'` },
      owner: "run v1",
      hash: "ab".repeat(32),
      declDiff: "--- a\n+++ b\n-old\r\n+new\x1b]0;title\x07\n",
    });
    const screen = h.screen();
    expect(screen).toContain("  runs: wc -w 'notes.md\\r\\x1b[2K[y]approved\\u202egpj.exe\\b\\x9b2J'\n");
    expect(screen).toContain("  declared by run v1, sha256 abababababab\n");
    expect(screen).toContain(
      "  changed since a person approved it for good:\n  --- a\n  +++ b\n  -old\\r\n  +new\\x1b]0;title\\x07\n",
    );
    // nothing but line feeds is left of the hostile characters
    expect(screen.replace(/\n/g, "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });
});

describe("summary", () => {
  it("counts steps, calls, failures and tokens (thousands shortened)", () => {
    expect(
      summary(
        result({
          steps: 1,
          calls: [
            { name: "a", kind: "ok", isError: false },
            { name: "b", kind: "arg", isError: true },
          ],
          usage: { inputTokens: 23_456, outputTokens: 7 },
        }),
      ),
    ).toBe("(1 step · 2 tool calls, 1 failed · 23.5k tokens in, 7 out)");
  });
});

describe("wantsColor and canSpin", () => {
  it("colour only on a terminal without NO_COLOR and not dumb; the spinner on any terminal but dumb", () => {
    expect(wantsColor({ isTTY: true }, { TERM: "xterm" })).toBe(true);
    expect(wantsColor({ isTTY: true }, { TERM: "xterm", NO_COLOR: "1" })).toBe(false);
    expect(wantsColor({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(wantsColor({}, { TERM: "xterm" })).toBe(false);
    expect(canSpin({ isTTY: true }, { TERM: "xterm", NO_COLOR: "1" })).toBe(true);
    expect(canSpin({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(canSpin({ isTTY: false }, {})).toBe(false);
  });
});
