import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_GRANT } from "../../tools/gate/powers.js";
import { pidsWith, uniqueSleep, waitGone, waitNoneWith } from "../helpers/processes.js";
import { declare, recordAt, setPolicy, tempDir, useHarness } from "./helpers.js";

const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

describe("shell impl", () => {
  const h = useHarness("memory");

  it("passes hostile arguments as plain strings, never through a shell", async () => {
    const canary = await tempDir("byteseek-canary-");
    try {
      await writeFile(join(canary.path, "keep"), "x");
      await declare(h.tree, {
        name: "text.echo",
        description: "prints its text",
        params: text,
        impl: { kind: "shell", argv: ["printf", "%s", "{text}"] },
      });
      const hostile = [
        `; rm -rf ${canary.path}`,
        `$(rm -rf ${canary.path})`,
        `\`rm -rf ${canary.path}\``,
        `x\nrm -rf ${canary.path}\n`,
        `' " && rm -rf ${canary.path} || true | cat > ${canary.path}/pwned`,
        "{text} * ~ $HOME",
      ];
      for (const value of hostile) {
        const r = await h.runtime.call("text.echo", { text: value }, { vid: "sh" });
        expect(r.kind).toBe("ok");
        expect(r.text).toBe(value);
        expect(r.details.argv).toEqual(["printf", "%s", value]);
      }
      expect(existsSync(join(canary.path, "keep"))).toBe(true);
      expect(existsSync(join(canary.path, "pwned"))).toBe(false);
    } finally {
      await canary.remove();
    }
  });

  it("fills placeholders inside longer elements and env values, and drops an absent optional one", async () => {
    await declare(h.tree, {
      name: "text.env",
      description: "shows an env var",
      params: { type: "object", properties: { who: { type: "string" }, n: { type: "integer" } } },
      impl: {
        kind: "shell",
        argv: ["sh", "-c", 'printf "%s|%s|%s" "$WHO" "$1" "$#"', "sh", "--n={n}", "{who}"],
        env: { WHO: "<{who}>" },
      },
    });
    const r = await h.runtime.call("text.env", { who: "a b", n: 3 }, { vid: "sh" });
    expect(r.text).toBe("<a b>|--n=3|2");
    const absent = await h.runtime.call("text.env", {}, { vid: "sh" });
    expect(absent.text).toBe("<>|--n=|1");
  });

  it("runs in the workspace, or a cwd inside it; a cwd outside is denied", async () => {
    await mkdir(join(h.workspace, "sub"));
    await declare(h.tree, {
      name: "fs.pwd",
      description: "pwd",
      params: { type: "object" },
      impl: { kind: "shell", argv: ["pwd"] },
    });
    expect((await h.runtime.call("fs.pwd", {}, { vid: "sh" })).text.trim()).toBe(h.workspace);
    await declare(h.tree, {
      name: "fs.pwd",
      description: "pwd",
      params: { type: "object" },
      impl: { kind: "shell", argv: ["pwd"], cwd: "sub" },
    });
    expect((await h.runtime.call("fs.pwd", {}, { vid: "sh" })).text.trim()).toBe(join(h.workspace, "sub"));
    await declare(h.tree, {
      name: "fs.pwd",
      description: "pwd",
      params: { type: "object" },
      impl: { kind: "shell", argv: ["pwd"], cwd: "../.." },
    });
    const out = await h.runtime.call("fs.pwd", {}, { vid: "sh" });
    expect(out).toMatchObject({ kind: "denied", details: { code: "outside_root" } });
  });

  it("answers runtime with the exit code and the output on a non-zero exit", async () => {
    await declare(h.tree, {
      name: "text.fail",
      description: "fails",
      params: { type: "object" },
      impl: { kind: "shell", argv: ["sh", "-c", "echo out; echo err >&2; exit 3"] },
    });
    const r = await h.runtime.call("text.fail", {}, { vid: "sh" });
    expect(r).toMatchObject({ kind: "runtime", details: { code: "exit_code", exitCode: 3 } });
    expect(r.text).toContain("exited with code 3");
    expect(r.text).toContain("out\nerr");
  });

  it("answers runtime for a program that does not exist", async () => {
    await declare(h.tree, {
      name: "text.ghost",
      description: "x",
      params: { type: "object" },
      impl: { kind: "shell", argv: ["no-such-program-byteseek"] },
    });
    const r = await h.runtime.call("text.ghost", {}, { vid: "sh" });
    expect(r.kind).toBe("runtime");
    expect(r.text).toContain("no such program");
  });

  it("keeps the last 2000 lines of a long output, with a marker", async () => {
    await declare(h.tree, {
      name: "text.seq",
      description: "seq",
      params: { type: "object" },
      impl: { kind: "shell", argv: ["seq", "1", "5000"] },
    });
    const r = await h.runtime.call("text.seq", {}, { vid: "sh" });
    expect(r.kind).toBe("ok");
    const lines = r.text.trimEnd().split("\n");
    expect(lines[0]).toMatch(/output truncated: showing the last 2000 of 5000 lines/);
    expect(lines[1]).toBe("3001");
    expect(lines.at(-1)).toBe("5000");
  });

  it("keeps the last 50 KB of output made of long lines", async () => {
    await declare(h.tree, {
      name: "text.wide",
      description: "wide",
      params: { type: "object" },
      impl: {
        kind: "shell",
        argv: [
          "sh",
          "-c",
          'i=0; while [ $i -lt 300 ]; do printf "%0999d\\n" $i; i=$((i+1)); done; echo LAST',
        ],
      },
    });
    const r = await h.runtime.call("text.wide", {}, { vid: "sh" });
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(50 * 1024 + 200);
    expect(r.text).toMatch(/^\[… output truncated/);
    expect(r.text.trimEnd().endsWith("LAST")).toBe(true);
  });

  it("kills every process the command started at the timeout", async () => {
    const sleep = uniqueSleep();
    await declare(h.tree, {
      name: "text.hang",
      description: "hangs",
      params: { type: "object" },
      impl: {
        kind: "shell",
        argv: ["sh", "-c", `sleep ${sleep} & while [ ! -d /proc/$! ]; do :; done; echo started; wait`],
        // long enough for the sandbox, sh and its child to start on a loaded machine (300 ms was not)
        timeoutMs: 1000,
      },
    });
    const r = await h.runtime.call("text.hang", {}, { vid: "sh" });
    expect(r).toMatchObject({ kind: "runtime", details: { code: "timeout" } });
    expect(r.text).toContain("timed out after 1000 ms");
    expect(r.text).toContain("started");
    expect(await waitNoneWith(sleep)).toBe(true);
    expect((await recordAt(h.tree, r.record!)).kind).toBe("runtime");
  });

  it("kills every process the command started when the caller aborts", async () => {
    const sleep = uniqueSleep();
    await declare(h.tree, {
      name: "text.hang",
      description: "hangs",
      params: { type: "object" },
      impl: { kind: "shell", argv: ["sh", "-c", `sleep ${sleep} & wait`] },
    });
    const controller = new AbortController();
    const pending = h.runtime.call("text.hang", {}, { vid: "sh", signal: controller.signal });
    let pid = 0;
    for (let i = 0; i < 500 && !pid; i++) {
      await new Promise((r) => setTimeout(r, 10));
      pid = pidsWith(sleep)[0] ?? 0;
    }
    expect(pid).toBeGreaterThan(0);
    controller.abort();
    const r = await pending;
    expect(r).toMatchObject({ kind: "runtime", details: { code: "aborted" } });
    expect(await waitGone(pid)).toBe(true);
  });

  it("runs an agent-written shell declaration under the shipped policy, and denies it once exec is taken away", async () => {
    await declare(
      h.tree,
      {
        name: "text.wc",
        description: "count",
        params: text,
        impl: { kind: "shell", argv: ["printf", "%s", "{text}"] },
      },
      "agent-1",
    );
    expect(await h.runtime.call("text.wc", { text: "x" }, { vid: "agent-1" })).toMatchObject({
      kind: "ok",
      text: "x",
    });
    const listed = (await h.runtime.listTools("agent-1")).valid.find((t) => t.name === "text.wc");
    expect(listed?.owner).toBe("agent-1");
    expect(listed?.blocked).toBeUndefined();
    await setPolicy(h.tree, { grants: { default: { ...DEFAULT_GRANT, exec: false } } });
    const denied = await h.runtime.call("text.wc", { text: "x" }, { vid: "agent-1" });
    expect(denied).toMatchObject({
      kind: "denied",
      details: { code: "denied", power: "exec", rule: "grants.default.exec" },
    });
    expect(denied.text).toContain('needs the power "exec"');
    expect(denied.text).toContain("set grants.default.exec to true");
    const blocked = (await h.runtime.listTools("agent-1")).valid.find((t) => t.name === "text.wc");
    expect(blocked?.blocked).toContain('"exec"');
  });
});
