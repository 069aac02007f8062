import { afterEach, describe, expect, it } from "vitest";
import { MAX_TEXT_BYTES } from "../../tools/call/cap.js";
import type { ToolHooks } from "../../tools/call/hooks.js";
import type { ToolUsage } from "../../tools/records/usage.js";
import { createRuntime } from "../../tools/runtime.js";
import type { ToolResult } from "../../tools/types.js";
import { json } from "../../tree/value.js";
import {
  BACKENDS,
  declare,
  type Harness,
  harness,
  nextStart,
  recordAt,
  setPolicy,
  silent,
  useHarness,
} from "./helpers.js";

describe.each(BACKENDS)("the call boundary on %s", (backend) => {
  const h = useHarness(backend);

  it("answers ok with the tool's text and records the call", async () => {
    const r = await h.runtime.call("test.echo", { text: "hi", times: 2 }, { vid: "run1" });
    expect(r).toMatchObject({ kind: "ok", isError: false, text: "hihi", details: { length: 2 } });
    expect(r.record).toBe("/byteseek/tool/run1/0");
    const rec = await recordAt(h.tree, r.record!);
    expect(rec).toMatchObject({
      name: "test.echo",
      args: { text: "hi", times: 2 },
      kind: "ok",
      isError: false,
      text: "hihi",
      details: { length: 2 },
    });
    expect(typeof rec.ts).toBe("number");
    expect(typeof rec.ms).toBe("number");
    const node = await h.tree.get(r.record!);
    expect(node?.ro).toBe(true);
    expect(node?.vid).toBe("run1");
  });

  it("answers vet for an unknown tool, naming the tools of that family", async () => {
    const r = await h.runtime.call("test.nope", {}, { vid: "run1" });
    expect(r.kind).toBe("vet");
    expect(r.isError).toBe(true);
    expect(r.details.code).toBe("unknown_tool");
    expect(r.text).toContain("test.echo");
    expect(r.record).toBe("/byteseek/tool/run1/0");
  });

  it("answers vet for a name that is not family.verb, without touching a bad key", async () => {
    const r = await h.runtime.call("../../etc", {}, { vid: "run1" });
    expect(r.kind).toBe("vet");
    expect(r.details.code).toBe("unknown_tool");
  });

  it("answers vet for a disabled tool", async () => {
    const node = await h.tree.get("/byteseek/tools/test.noop");
    await h.tree.set(
      "/byteseek/tools/test.noop",
      json({ ...(node as { value: { value: object } }).value.value, enabled: false }),
    );
    const r = await h.runtime.call("test.noop", {}, { vid: "run1" });
    expect(r).toMatchObject({ kind: "vet", details: { code: "disabled_tool" } });
  });

  it("reports a broken declaration, leaves it out of the list, and answers vet when it is called", async () => {
    await declare(h.tree, { name: "text.broken", description: "x", params: { type: "strng" }, impl: {} });
    await h.tree.set(
      "/byteseek/tools/text.wrongname",
      json({
        name: "text.other",
        description: "d",
        params: { type: "object" },
        impl: { kind: "builtin", ref: "test.noop" },
      }),
    );
    await h.tree.set(
      "/byteseek/tools/text.ghost",
      json({
        name: "text.ghost",
        description: "d",
        params: { type: "object" },
        impl: { kind: "builtin", ref: "no.such" },
      }),
    );
    const list = await h.runtime.listTools();
    const names = list.valid.map((t) => t.name);
    expect(names).toContain("test.echo");
    expect(names).toContain("tree.set");
    expect(names).not.toContain("text.broken");
    const broken = list.invalid.find((t) => t.name === "text.broken");
    expect(broken?.key).toBe("/byteseek/tools/text.broken");
    expect(broken?.problems.join("\n")).toMatch(/params/);
    expect(broken?.problems.join("\n")).toMatch(/impl/);
    expect(list.invalid.find((t) => t.name === "text.wrongname")?.problems.join()).toMatch(
      /does not match its key/,
    );
    expect(list.invalid.find((t) => t.name === "text.ghost")?.problems.join()).toMatch(
      /no built-in "no.such"/,
    );
    const r = await h.runtime.call("text.broken", {}, { vid: "run1" });
    expect(r).toMatchObject({ kind: "vet", details: { code: "invalid_declaration" } });
    expect(r.text).toContain("/byteseek/tools/text.broken");
    const ghost = await h.runtime.call("text.ghost", {}, { vid: "run1" });
    expect(ghost.kind).toBe("vet");
  });

  it("answers arg with the failing field, what was expected, and the signature", async () => {
    const r = await h.runtime.call("test.echo", { text: 5, extra: true }, { vid: "run1" });
    expect(r.kind).toBe("arg");
    expect(r.details.code).toBe("invalid_args");
    expect(r.text).toContain("text: expected must be string, got number 5");
    expect(r.text).toContain("extra: expected no such argument");
    expect(r.text).toContain("Signature: test.echo(text: string, times?: integer)");
    const missing = await h.runtime.call("test.echo", {}, { vid: "run1" });
    expect(missing.text).toContain("text: expected a value (this argument is required)");
    const notObject = await h.runtime.call("test.echo", ["hi"], { vid: "run1" });
    expect(notObject.kind).toBe("arg");
    expect((await recordAt(h.tree, "/byteseek/tool/run1/2")).kind).toBe("arg");
  });

  it("answers denied for a confirm tool without approval, and runs it with one", async () => {
    await declare(h.tree, {
      name: "test.careful",
      description: "needs a yes",
      params: { type: "object" },
      confirm: true,
      impl: { kind: "builtin", ref: "test.noop" },
    });
    const r = await h.runtime.call("test.careful", {}, { vid: "run1" });
    expect(r).toMatchObject({ kind: "denied", details: { code: "needs_approval" } });
    expect(r.text).toMatch(/approv/);
    const ok = await h.runtime.call("test.careful", {}, { vid: "run1", approve: true });
    expect(ok.kind).toBe("ok");
  });

  it("answers denied for a tool the policy lists under confirm, by name or builtin ref", async () => {
    await setPolicy(h.tree, { confirm: ["test.noop"] });
    expect((await h.runtime.call("test.noop", {}, { vid: "run1" })).kind).toBe("denied");
    await declare(h.tree, {
      name: "test.alias",
      description: "same function",
      params: { type: "object" },
      impl: { kind: "builtin", ref: "test.noop" },
    });
    expect((await h.runtime.call("test.alias", {}, { vid: "run1" })).kind).toBe("denied");
  });

  it("answers runtime with a ToolError's code and details, and for any other throw", async () => {
    const r = await h.runtime.call("test.fail", {}, { vid: "run1" });
    expect(r).toMatchObject({
      kind: "runtime",
      isError: true,
      text: "nothing matched: include more context",
      details: { code: "not_found", lines: [4, 9] },
    });
    const boom = await h.runtime.call("test.boom", {}, { vid: "run1" });
    expect(boom).toMatchObject({ kind: "runtime", details: { code: "failed" } });
    expect(boom.text).toContain("kaboom");
  });

  it("stops a hanging tool at its timeout", async () => {
    const r = await h.runtime.call("test.hang", {}, { vid: "run1" });
    expect(r).toMatchObject({ kind: "runtime", details: { code: "timeout" } });
    expect(r.text).toContain("timed out after 200 ms");
    expect((await recordAt(h.tree, r.record!)).kind).toBe("runtime");
  });

  it("stops a hanging tool when the caller aborts", async () => {
    await declare(h.tree, {
      name: "test.hang",
      description: "hangs",
      params: { type: "object" },
      timeoutMs: 3_600_000,
      impl: { kind: "builtin", ref: "test.hang" },
    });
    const controller = new AbortController();
    const started = nextStart(h.probe);
    const pending = h.runtime.call("test.hang", {}, { vid: "run1", signal: controller.signal });
    await started;
    controller.abort();
    const r = await pending;
    expect(r).toMatchObject({ kind: "runtime", details: { code: "aborted" } });
  });

  it("answers aborted at once when the signal is already aborted", async () => {
    const r = await h.runtime.call("test.noop", {}, { vid: "run1", signal: AbortSignal.abort() });
    expect(r).toMatchObject({ kind: "runtime", details: { code: "aborted" } });
  });

  it("caps the text at 50 KB with a marker, and records exactly what it answered", async () => {
    const r = await h.runtime.call("test.big", {}, { vid: "run1" });
    expect(r.kind).toBe("ok");
    expect(Buffer.byteLength(r.text)).toBeLessThan(MAX_TEXT_BYTES + 200);
    expect(r.text).toMatch(/\[… truncated: \d+ more bytes not shown/);
    expect(r.text).not.toContain("END");
    expect((await recordAt(h.tree, r.record!)).text).toBe(r.text);
  });

  it("hands builtins the workspace real path, the vid and the policy's default timeout", async () => {
    await setPolicy(h.tree, { defaultTimeoutMs: 5000 });
    const r = await h.runtime.call("test.ctx", {}, { vid: "run-7" });
    expect(r.details).toEqual({ workspace: h.workspace, vid: "run-7", defaultTimeoutMs: 5000 });
  });

  it("denies every call while the policy is invalid, saying why", async () => {
    await setPolicy(h.tree, { agentImpls: ["ftp"] } as never);
    const r = await h.runtime.call("test.noop", {}, { vid: "run1" });
    expect(r.kind).toBe("denied");
    expect(r.text).toContain("policy");
  });

  it("refuses a malformed vid without writing anything", async () => {
    const r = await h.runtime.call("test.noop", {}, { vid: "a/b" });
    expect(r.kind).toBe("arg");
    expect(r.record).toBeUndefined();
  });

  it("keeps record numbers dense and unique and usage exact under 50 parallel calls", async () => {
    const calls: Promise<ToolResult>[] = [];
    for (let i = 0; i < 50; i++) {
      if (i % 5 === 4) calls.push(h.runtime.call("test.echo", { text: 1 }, { vid: "par" }));
      else if (i % 2) calls.push(h.runtime.call("test.noop", {}, { vid: "par" }));
      else calls.push(h.runtime.call("test.echo", { text: `#${i}` }, { vid: "par" }));
    }
    const results = await Promise.all(calls);
    const numbers = results.map((r) => Number(r.record?.split("/").at(-1))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const listed = await h.tree.list("/byteseek/tool/par/");
    expect(listed.children.map((c) => c.name)).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
    for (const r of results) expect((await recordAt(h.tree, r.record!)).text).toBe(r.text);

    await h.runtime.flush();
    const usage = (await h.tree.get("/byteseek/usage/par")) as unknown as { value: { value: ToolUsage } };
    const u = usage.value.value;
    expect(u.calls).toBe(50);
    expect(u.kinds).toEqual({ ok: 40, arg: 10 });
    expect(u.tools["test.noop"]?.calls).toBe(20);
    expect(u.tools["test.echo"]?.calls).toBe(30);
    expect(u.tools["test.echo"]?.kinds).toEqual({ ok: 20, arg: 10 });
  });

  it("keeps other fields of the usage node (the agent's token counts)", async () => {
    await h.tree.set("/byteseek/usage/run1", json({ tokens: { input: 10 } }), { ro: true, force: true });
    await h.runtime.call("test.noop", {}, { vid: "run1" });
    await h.runtime.flush();
    const node = (await h.tree.get("/byteseek/usage/run1")) as unknown as {
      value: { value: Record<string, unknown> };
    };
    expect(node.value.value).toMatchObject({ tokens: { input: 10 }, calls: 1 });
  });
});

describe("usage counters", () => {
  it("with usageWrites: await, are stored before the call answers", async () => {
    const h = await harness("classic", { usageWrites: "await" });
    try {
      for (let i = 0; i < 3; i++) {
        await h.runtime.call("test.noop", {}, { vid: "u" });
        const node = (await h.tree.get("/byteseek/usage/u")) as unknown as { value: { value: ToolUsage } };
        expect(node.value.value.calls).toBe(i + 1);
      }
    } finally {
      await h.dispose();
    }
  });
});

describe("hooks", () => {
  let h: Harness;
  afterEach(async () => {
    await h.dispose();
  });

  it("a before-hook denies with its reason, an after-hook rewrites what the model sees and what is recorded", async () => {
    const seen: string[] = [];
    const hooks: ToolHooks[] = [
      {
        before: (call) => {
          seen.push(`before ${call.name}`);
          return call.args.text === "secret" ? { deny: "no secrets here" } : undefined;
        },
        after: (call, result) => {
          seen.push(`after ${call.name} ${result.kind}`);
          return result.kind === "ok" ? { text: `${result.text}!` } : undefined;
        },
      },
    ];
    h = await harness("memory", { hooks });
    const denied = await h.runtime.call("test.echo", { text: "secret" }, { vid: "v" });
    expect(denied).toMatchObject({ kind: "denied", details: { code: "denied", reason: "no secrets here" } });
    expect(denied.text).toContain("no secrets here");
    const ok = await h.runtime.call("test.echo", { text: "hi" }, { vid: "v" });
    expect(ok.text).toBe("hi!");
    expect((await recordAt(h.tree, ok.record!)).text).toBe("hi!");
    expect(seen).toEqual([
      "before test.echo",
      "after test.echo denied",
      "before test.echo",
      "after test.echo ok",
    ]);
  });

  it("a throwing before-hook denies; a throwing after-hook keeps the result", async () => {
    h = await harness("memory", {
      hooks: [
        {
          before: (call) => {
            if (call.name === "test.noop") throw new Error("checker down");
          },
          after: () => {
            throw new Error("after broke");
          },
        },
      ],
    });
    expect((await h.runtime.call("test.noop", {}, { vid: "v" })).kind).toBe("denied");
    expect(await h.runtime.call("test.echo", { text: "x" }, { vid: "v" })).toMatchObject({
      kind: "ok",
      text: "x",
    });
  });
});

describe("sequential tools", () => {
  it("run one at a time within a run, while non-sequential ones may overlap", async () => {
    const h = await harness("memory");
    try {
      let running = 0;
      let most = 0;
      const track = async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
        running--;
        return { text: "ok" };
      };
      const runtime = createRuntime({
        tree: h.tree,
        logger: silent,
        workspace: h.workspace,
        builtins: [
          ...h.builtins,
          {
            ref: "test.track",
            declaration: {
              name: "test.track",
              description: "d",
              params: { type: "object" },
              impl: { kind: "builtin", ref: "test.track" },
            },
            execute: track,
          },
        ],
      });
      await declare(h.tree, {
        name: "test.track",
        description: "d",
        params: { type: "object" },
        sequential: true,
        impl: { kind: "builtin", ref: "test.track" },
      });
      await Promise.all(Array.from({ length: 8 }, () => runtime.call("test.track", {}, { vid: "s" })));
      expect(most).toBe(1);
      await declare(h.tree, {
        name: "test.track",
        description: "d",
        params: { type: "object" },
        sequential: false,
        impl: { kind: "builtin", ref: "test.track" },
      });
      await Promise.all(Array.from({ length: 8 }, () => runtime.call("test.track", {}, { vid: "s" })));
      expect(most).toBeGreaterThan(1);
    } finally {
      await h.dispose();
    }
  });
});
