import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { hashOf, seedTools } from "../../tools/catalogue/seed.js";
import { createEditTools } from "../../tools/edit/index.js";
import { LEGACY_DEFAULT_POLICY, POLICY_KEY, Policy } from "../../tools/gate/policy.js";
import { DEFAULT_GRANT } from "../../tools/gate/powers.js";
import type { LlmClient } from "../../tools/impl/llm.js";
import { createRuntime } from "../../tools/runtime.js";
import { createShellTools } from "../../tools/shell/index.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import type { BuiltinTool } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import { type Json, json, str } from "../../tree/value.js";
import {
  personEdits,
  recordAt,
  setPolicy,
  silent,
  tempDir,
  useHarness,
  wcDeclaration as wc,
} from "./helpers.js";

const builtins: BuiltinTool[] = [...createEditTools(), ...createShellTools(), ...createTreeTools()];
const alias = (name: string, ref: string) => ({
  name,
  description: `${ref} under another name`,
  snippet: `${name} — ${ref}`,
  params: builtins.find((b) => b.ref === ref)?.declaration.params ?? {},
  impl: { kind: "builtin", ref },
});

describe("powers and grants", () => {
  let llmCalls: string[] = [];
  const llm: LlmClient = {
    async complete(prompt) {
      llmCalls.push(prompt);
      return "model says hi";
    },
  };
  const h = useHarness("memory", { llm }, builtins);
  const agentDeclares = (decl: Record<string, unknown>, vid = "agent") =>
    h.runtime.call("tree.set", { key: `/byteseek/tools/${String(decl.name)}`, value: decl }, { vid });

  beforeEach(async () => {
    llmCalls = [];
    await writeFile(join(h.workspace, "a.txt"), "alpha\n");
  });

  it("lets an agent declare and call a shell tool with the shipped default policy", async () => {
    const set = await agentDeclares(wc);
    expect(set.text).toContain("text.wc can be called now");
    const r = await h.runtime.call("text.wc", { text: "one two three" }, { vid: "agent" });
    expect(r.kind).toBe("ok");
    expect(r.text.trim()).toBe("3");
    expect(
      (await h.runtime.listTools("agent")).valid.find((t) => t.name === "text.wc")?.blocked,
    ).toBeUndefined();
  });

  it("taking exec away refuses shell.run and every agent shell tool at once, naming the power, rule and fix", async () => {
    await agentDeclares(wc);
    await setPolicy(h.tree, { grants: { default: { ...DEFAULT_GRANT, exec: false } } });
    const run = await h.runtime.call("shell.run", { command: "touch ran" }, { vid: "agent" });
    const tool = await h.runtime.call("text.wc", { text: "x" }, { vid: "agent" });
    for (const r of [run, tool]) {
      expect(r).toMatchObject({
        kind: "denied",
        details: { code: "denied", power: "exec", rule: "grants.default.exec" },
      });
      expect(r.text).toContain('needs the power "exec" (run commands)');
      expect(r.text).toContain("set grants.default.exec to true");
    }
    const { valid } = await h.runtime.listTools("agent");
    expect(valid.find((t) => t.name === "shell.run")?.blocked).toContain('"exec"');
    expect(valid.find((t) => t.name === "text.wc")?.blocked).toContain('"exec"');
    // Nothing ran: the command would have created this file.
    await expect(import("node:fs/promises").then((f) => f.stat(join(h.workspace, "ran")))).rejects.toThrow();
  });

  it("grants per run-id pattern, the first matching entry over the default", async () => {
    await setPolicy(h.tree, {
      grants: {
        default: { ...DEFAULT_GRANT, exec: false },
        runs: [
          { vid: "ci-*", grant: { exec: true } },
          { vid: "*", grant: { write: false } },
        ],
      },
    });
    expect((await h.runtime.call("shell.run", { command: "true" }, { vid: "ci-42" })).kind).toBe("ok");
    const other = await h.runtime.call("shell.run", { command: "true" }, { vid: "dev-1" });
    expect(other).toMatchObject({ kind: "denied", details: { rule: "grants.runs[1] (*).exec" } });
    const write = await h.runtime.call("edit.write", { path: "b.txt", text: "b" }, { vid: "dev-1" });
    expect(write).toMatchObject({ kind: "denied", details: { power: "write" } });
    expect((await h.runtime.call("edit.read", { path: "a.txt" }, { vid: "dev-1" })).kind).toBe("ok");
  });

  it("grants tree keys by prefix", async () => {
    await setPolicy(h.tree, { grants: { default: { ...DEFAULT_GRANT, tree: ["/scratch/"] } } });
    expect((await h.runtime.call("tree.set", { key: "/scratch/a", value: 1 }, { vid: "r" })).kind).toBe("ok");
    const out = await h.runtime.call("tree.set", { key: "/byteseek/tools/x.y", value: 1 }, { vid: "r" });
    expect(out).toMatchObject({ kind: "denied", details: { power: "tree", rule: "grants.default.tree" } });
    expect(out.text).toContain("on /byteseek/tools/x.y");
    expect(await h.tree.get("/byteseek/tools/x.y")).toBeUndefined();
  });

  it("grants the model and its prompt key to llm tools, and denyKeys bind the prompt key", async () => {
    await h.tree.set("/byteseek/prompt/hi", str("say hi"));
    await h.tree.set("/byteseek/llm/key", str("sk-secret"));
    await agentDeclares(
      { ...wc, name: "text.hi", impl: { kind: "llm", prompt: "/byteseek/prompt/hi" } },
      "r",
    );
    await agentDeclares(
      { ...wc, name: "text.leak", impl: { kind: "llm", prompt: "/byteseek/llm/key" } },
      "r",
    );
    await agentDeclares({ ...wc, name: "text.rules", impl: { kind: "llm", prompt: POLICY_KEY } }, "r");
    expect((await h.runtime.call("text.hi", { text: "x" }, { vid: "r" })).kind).toBe("ok");
    const leak = await h.runtime.call("text.leak", { text: "x" }, { vid: "r" });
    expect(leak).toMatchObject({ kind: "denied", details: { rule: "denyKeys[0] (/byteseek/llm/)" } });
    const rules = await h.runtime.call("text.rules", { text: "x" }, { vid: "r" });
    expect(rules).toMatchObject({ kind: "denied", details: { rule: "policy" } });
    expect(llmCalls).toEqual(["say hi"]);
    await setPolicy(h.tree, { grants: { default: { ...DEFAULT_GRANT, model: false } } });
    const noModel = await h.runtime.call("text.hi", { text: "x" }, { vid: "r" });
    expect(noModel).toMatchObject({ kind: "denied", details: { power: "model" } });
  });

  it("refuses an http tool whose host the run's grant does not list, with the host in the fix", async () => {
    await agentDeclares(
      {
        ...wc,
        name: "web.get",
        impl: { kind: "http", url: "http://127.0.0.1:9/x", method: "GET" },
      },
      "r",
    );
    const r = await h.runtime.call("web.get", { text: "x" }, { vid: "r" });
    expect(r).toMatchObject({ kind: "denied", details: { power: "net", rule: "grants.default.net" } });
    expect(r.text).toContain('add "127.0.0.1:9" to grants.default.net');
  });
});

describe("a declaration never launders a rule", () => {
  const h = useHarness("memory", {}, builtins);
  const declareAs = (decl: Record<string, unknown>, vid = "agent") =>
    h.runtime.call("tree.set", { key: `/byteseek/tools/${String(decl.name)}`, value: decl }, { vid });

  it("an alias of shell.run needs approval when shell.run does", async () => {
    await personEdits(h.tree, "shell.run", { confirm: true });
    await declareAs(alias("x.run", "shell.run"));
    const r = await h.runtime.call("x.run", { command: "touch ran" }, { vid: "agent" });
    expect(r).toMatchObject({
      kind: "denied",
      details: { code: "needs_approval", rule: "shell.run.confirm (inherited)" },
    });
    const approved = await h.runtime.call("x.run", { command: "true" }, { vid: "agent", approve: true });
    expect(approved.kind).toBe("ok");
  });

  it("an alias of a switched-off or removed tool is off too, and not offered", async () => {
    await declareAs(alias("x.run", "shell.run"));
    await personEdits(h.tree, "shell.run", { enabled: false });
    const off = await h.runtime.call("x.run", { command: "true" }, { vid: "agent" });
    expect(off).toMatchObject({ kind: "vet", details: { code: "disabled_tool" } });
    expect(off.text).toContain("runs the built-in shell.run, which is switched off");
    expect((await h.runtime.listTools("agent")).valid.find((t) => t.name === "x.run")?.blocked).toContain(
      "switched off",
    );
    await h.tree.del("/byteseek/tools/shell.run");
    const gone = await h.runtime.call("x.run", { command: "true" }, { vid: "agent" });
    expect(gone.text).toContain("is not declared");
  });

  it("policy.confirm and deny bind a tool whatever name reaches it", async () => {
    await writeFile(join(h.workspace, "secret.txt"), "s3cret");
    await mkdir(join(h.workspace, "ok"));
    await writeFile(join(h.workspace, "ok", "a.txt"), "fine");
    await h.tree.set(POLICY_KEY, json({ confirm: ["shell.run"], deny: ["secret.txt"] } as Json), {
      ro: true,
      force: true,
    });
    await declareAs(alias("x.run", "shell.run"));
    await declareAs(alias("x.peek", "edit.read"));
    const run = await h.runtime.call("x.run", { command: "true" }, { vid: "agent" });
    expect(run).toMatchObject({ details: { code: "needs_approval", rule: "confirm[0] (shell.run)" } });
    const peek = await h.runtime.call("x.peek", { path: "secret.txt" }, { vid: "agent" });
    expect(peek).toMatchObject({ kind: "denied", details: { rule: "deny[0] (secret.txt)" } });
    expect(peek.text).not.toContain("s3cret");
    expect((await h.runtime.call("x.peek", { path: "ok/a.txt" }, { vid: "agent" })).text).toContain("fine");
  });
});

describe("records say what ran and why", () => {
  it("carry the declaration's key, revision and hash, its writer, and the gate's rule", async () => {
    const ws = await tempDir("byteseek-rec-ws-");
    const tree = await openTree({ backend: "memory" });
    await seedTools({ tree, builtins });
    const runtime = createRuntime({ tree, builtins, logger: silent, workspace: ws.path });
    try {
      const set = await runtime.call(
        "tree.set",
        { key: "/byteseek/tools/text.wc", value: wc },
        { vid: "agent" },
      );
      const setRec = await recordAt(tree, set.record!);
      const shipped = await tree.get("/byteseek/tools/tree.set");
      expect(setRec).toMatchObject({
        decl: {
          key: "/byteseek/tools/tree.set",
          modRev: shipped!.modRev,
          hash: hashOf(shipped?.kind === "json" ? shipped.value.value : null),
        },
        writer: "person",
        gate: { rule: "grants.default" },
      });
      const r = await runtime.call("text.wc", { text: "a b" }, { vid: "agent" });
      const declNode = await tree.get("/byteseek/tools/text.wc");
      expect(await recordAt(tree, r.record!)).toMatchObject({
        kind: "ok",
        decl: { key: "/byteseek/tools/text.wc", modRev: declNode!.modRev, hash: hashOf(wc) },
        writer: "agent",
        gate: { rule: "grants.default" },
      });
      await tree.set(POLICY_KEY, json({ confirm: ["text.wc"] }), { ro: true, force: true });
      const refused = await runtime.call("text.wc", { text: "a b" }, { vid: "agent" });
      expect(await recordAt(tree, refused.record!)).toMatchObject({
        kind: "denied",
        gate: { rule: "confirm[0] (text.wc)" },
      });
    } finally {
      await runtime.close();
      await tree.close();
      await ws.remove();
    }
  });
});

describe("a policy written before grants", () => {
  it("is replaced by today's default at start when it is exactly the old shipped default", async () => {
    const tree = await openTree({ backend: "memory" });
    try {
      await tree.set(POLICY_KEY, json(LEGACY_DEFAULT_POLICY as unknown as Json), { ro: true });
      const report = await seedTools({ tree, builtins });
      expect(report.policyMigrated).toBe(true);
      const node = await tree.get(POLICY_KEY);
      expect(node?.kind === "json" && node.value.value).toEqual(Policy.parse({}));
      expect(node?.ro).toBe(true);
    } finally {
      await tree.close();
    }
  });

  it("is kept when a person changed it, and its httpHosts and agentImpls still bind", async () => {
    const ws = await tempDir("byteseek-legacy-ws-");
    const tree = await openTree({ backend: "memory" });
    const legacy = { ...LEGACY_DEFAULT_POLICY, agentImpls: ["builtin"], httpHosts: ["127.0.0.1:9"] };
    await tree.set(POLICY_KEY, json(legacy as unknown as Json), { ro: true });
    const report = await seedTools({ tree, builtins });
    const runtime = createRuntime({ tree, builtins, logger: silent, workspace: ws.path });
    try {
      expect(report.policyMigrated).toBe(false);
      const node = await tree.get(POLICY_KEY);
      expect(node?.kind === "json" && node.value.value).toEqual(legacy);
      await runtime.call("tree.set", { key: "/byteseek/tools/text.wc", value: wc }, { vid: "agent" });
      const r = await runtime.call("text.wc", { text: "a" }, { vid: "agent" });
      expect(r).toMatchObject({ kind: "denied", details: { rule: "agentImpls" } });
      expect(r.text).toContain("legacy agentImpls rule");
      // httpHosts still lets http tools reach its hosts (the connection then fails: nothing listens on :9).
      await tree.set(
        "/byteseek/tools/web.get",
        json({ ...wc, name: "web.get", impl: { kind: "http", url: "http://127.0.0.1:9/x", method: "GET" } }),
      );
      const web = await runtime.call("web.get", { text: "x" }, { vid: "agent" });
      expect(web).toMatchObject({ kind: "runtime", details: { code: "failed" } });
    } finally {
      await runtime.close();
      await tree.close();
      await ws.remove();
    }
  });
});
