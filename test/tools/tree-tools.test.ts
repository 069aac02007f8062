import { describe, expect, it } from "vitest";
import { acceptAgentTool } from "../../tools/catalogue/agent-tools.js";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import { DEFAULT_GRANT } from "../../tools/gate/powers.js";
import { json, str } from "../../tree/value.js";
import { BACKENDS, setPolicy, useHarness } from "./helpers.js";

const wc = {
  name: "text.wc",
  description: "Count the lines, words and bytes of a text",
  snippet: "text.wc(text) — count lines, words and bytes",
  params: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  impl: { kind: "shell", argv: ["sh", "-c", 'printf %s "$1" | wc -w', "sh", "{text}"] },
};

describe.each(BACKENDS)("the tree tools on %s", (backend) => {
  const h = useHarness(backend);

  it("tree.set writes a value owned by the calling run, tree.get reads it back", async () => {
    const set = await h.runtime.call("tree.set", { key: "/notes/a", value: { n: 1 } }, { vid: "r1" });
    expect(set).toMatchObject({ kind: "ok", details: { kind: "json", version: 1 } });
    const node = await h.tree.get("/notes/a");
    expect(node?.vid).toBe("r1");
    const text = await h.runtime.call("tree.set", { key: "/notes/b", value: "plain" }, { vid: "r1" });
    expect(text.details.kind).toBe("char/utf8");
    const big = await h.runtime.call(
      "tree.set",
      { key: "/notes/c", value: "9007199254740993", kind: "int64" },
      { vid: "r1" },
    );
    expect(big.details.kind).toBe("int64");
    const got = await h.runtime.call("tree.get", { key: "/notes/a" }, { vid: "r1" });
    expect(got.kind).toBe("ok");
    expect(got.text).toContain("/notes/a (json, version 1, owner r1)");
    expect(got.text).toContain('"n": 1');
    expect((await h.runtime.call("tree.get", { key: "/notes/c" }, { vid: "r1" })).text).toContain(
      "9007199254740993",
    );
  });

  it("tree.get says when a key is absent or a directory", async () => {
    const absent = await h.runtime.call("tree.get", { key: "/nothing" }, { vid: "r1" });
    expect(absent.kind).toBe("ok");
    expect(absent.text).toContain("does not exist");
    await h.tree.set("/d/x", str("1"));
    const dir = await h.runtime.call("tree.get", { key: "/d/" }, { vid: "r1" });
    expect(dir.text).toContain("is a directory with 1 entries");
  });

  it("tree.set honours ifVersion, answering runtime on a stale version", async () => {
    await h.runtime.call("tree.set", { key: "/k", value: 1 }, { vid: "r1" });
    const stale = await h.runtime.call("tree.set", { key: "/k", value: 2, ifVersion: 5 }, { vid: "r1" });
    expect(stale).toMatchObject({ kind: "runtime", details: { code: "version_mismatch" } });
    expect(stale.text).toContain("tree.get it again");
    expect(
      (await h.runtime.call("tree.set", { key: "/k", value: 2, ifVersion: 1 }, { vid: "r1" })).kind,
    ).toBe("ok");
  });

  it("refuses the policy, read-only keys, records and system entries", async () => {
    const policy = await h.runtime.call(
      "tree.set",
      { key: POLICY_KEY, value: { agentImpls: ["shell"] } },
      { vid: "r1" },
    );
    expect(policy).toMatchObject({ kind: "denied", details: { code: "denied" } });
    expect((await h.runtime.call("tree.del", { key: POLICY_KEY }, { vid: "r1" })).kind).toBe("denied");
    expect((await h.runtime.call("tree.get", { key: POLICY_KEY }, { vid: "r1" })).kind).toBe("denied");
    await h.tree.set("/locked", str("x"), { ro: true });
    const ro = await h.runtime.call("tree.set", { key: "/locked", value: "y" }, { vid: "r1" });
    expect(ro).toMatchObject({ kind: "denied", details: { code: "read_only" } });
    expect((await h.runtime.call("tree.del", { key: "/locked" }, { vid: "r1" })).kind).toBe("denied");
    const rec = await h.runtime.call("tree.get", { key: "/locked" }, { vid: "r1" });
    const forged = await h.runtime.call("tree.set", { key: rec.record!, value: "forged" }, { vid: "r1" });
    expect(forged.kind).toBe("denied");
    const sys = await h.runtime.call(
      "tree.set",
      { key: "/byteseek/tools/‥shipped/x.y", value: {} },
      { vid: "r1" },
    );
    expect(sys.kind).toBe("denied");
    expect((await h.tree.get("/locked"))?.kind).toBe("char/utf8");
  });

  it("answers arg for a malformed key", async () => {
    const r = await h.runtime.call("tree.set", { key: "/a//b", value: 1 }, { vid: "r1" });
    expect(r).toMatchObject({ kind: "arg", details: { code: "invalid_args", treeCode: "TREE_INVALID_KEY" } });
  });

  it("tree.list pages through a directory, hiding system entries", async () => {
    for (let i = 0; i < 5; i++) await h.tree.set(`/list/${i}`, json({ i }));
    await h.tree.set("/list/sub/x", str("y"));
    await h.tree.set("/list/‥hidden", str("h"));
    const first = await h.runtime.call("tree.list", { key: "/list/", limit: 3 }, { vid: "r1" });
    expect(first.text.split("\n").slice(1, 4)).toEqual([
      '0\tjson\t{"i":0}',
      '1\tjson\t{"i":1}',
      '2\tjson\t{"i":2}',
    ]);
    expect(first.details.next).toBe("2");
    const rest = await h.runtime.call("tree.list", { key: "/list", after: "2" }, { vid: "r1" });
    expect(rest.text).toContain("sub/\tindex\t(1 entries)");
    expect(rest.text).not.toContain("hidden");
    const tools = await h.runtime.call("tree.list", { key: "/byteseek/tools/" }, { vid: "r1" });
    expect(tools.text).toContain("tree.set\tjson");
    expect(tools.text).not.toContain("shipped");
  });

  it("tree.del deletes a value and says when there was nothing", async () => {
    await h.tree.set("/gone", str("x"));
    expect((await h.runtime.call("tree.del", { key: "/gone" }, { vid: "r1" })).text).toBe("Deleted /gone.");
    expect((await h.runtime.call("tree.del", { key: "/gone" }, { vid: "r1" })).text).toContain(
      "nothing to delete",
    );
    await h.tree.set("/full/x", str("x"));
    expect((await h.runtime.call("tree.del", { key: "/full/" }, { vid: "r1" })).kind).toBe("runtime");
  });

  it("lets an agent declare a shell tool with tree.set under the shipped policy: listed and callable at once", async () => {
    const set = await h.runtime.call(
      "tree.set",
      { key: "/byteseek/tools/text.wc", value: wc },
      { vid: "agent" },
    );
    expect(set.kind).toBe("ok");
    expect(set.text).toContain("text.wc can be called now");
    const listed = (await h.runtime.listTools("agent")).valid.find((t) => t.name === "text.wc");
    expect(listed?.owner).toBe("agent");
    expect(listed?.declaration.snippet).toBe(wc.snippet);
    const r = await h.runtime.call("text.wc", { text: "one two three" }, { vid: "agent" });
    expect(r).toMatchObject({ kind: "ok" });
    expect(r.text.trim()).toBe("3");
  });

  it("warns an agent declaring a shell tool its run may not call, and the call is denied", async () => {
    await setPolicy(h.tree, {
      grants: { default: DEFAULT_GRANT, runs: [{ vid: "sandbox-*", grant: { exec: false } }] },
    });
    const set = await h.runtime.call(
      "tree.set",
      { key: "/byteseek/tools/text.wc", value: wc },
      { vid: "sandbox-1" },
    );
    expect(set.text).toContain(
      'needs the power "exec", which this run does not hold (grants.runs[0] (sandbox-*))',
    );
    const denied = await h.runtime.call("text.wc", { text: "one two" }, { vid: "sandbox-1" });
    expect(denied).toMatchObject({
      kind: "denied",
      details: { power: "exec", rule: "grants.runs[0] (sandbox-*).exec" },
    });
    // another run holding exec is offered the tool once a person accepts it (policy agentTools.share)
    expect((await h.runtime.call("text.wc", { text: "one two" }, { vid: "other" })).details.code).toBe(
      "held_for_review",
    );
    await acceptAgentTool(h.tree, "text.wc", { by: "person (test)" });
    expect((await h.runtime.call("text.wc", { text: "one two" }, { vid: "other" })).kind).toBe("ok");
  });

  it("refuses a broken declaration an agent writes, naming each problem, and stores nothing", async () => {
    const r = await h.runtime.call(
      "tree.set",
      {
        key: "/byteseek/tools/text.bad",
        value: { name: "text.bad", params: { type: "object" }, impl: { kind: "shell", argv: [] } },
      },
      { vid: "agent" },
    );
    expect(r.kind).toBe("arg");
    expect(r.text).toContain("Not written: this is not a valid tool declaration");
    expect(r.text).toContain("description: missing (expected string)");
    expect(r.text).toContain("impl.argv: Too small");
    expect(r.details).toMatchObject({ check: "declaration" });
    expect(await h.tree.get("/byteseek/tools/text.bad")).toBeUndefined();
  });

  it("denies the tree tools the keys the policy lists under denyKeys", async () => {
    await h.tree.set("/byteseek/llm/apiKey", str("sk-secret"));
    const r = await h.runtime.call("tree.get", { key: "/byteseek/llm/apiKey" }, { vid: "r1" });
    expect(r.kind).toBe("denied");
    expect(r.text).not.toContain("sk-secret");
    expect((await h.runtime.call("tree.list", { key: "/byteseek/llm/" }, { vid: "r1" })).kind).toBe("denied");
  });

  it("never lets a tool read or redirect the model's settings, whatever denyKeys lists", async () => {
    // A person's own denyKeys replace the shipped list; the model's settings stay out of reach.
    await setPolicy(h.tree, { denyKeys: ["/private/"] });
    await h.tree.set("/byteseek/llm/key", str("sk-secret"));
    const write = await h.runtime.call(
      "tree.set",
      { key: "/byteseek/llm/url", value: "http://attacker.example/v1" },
      { vid: "r1" },
    );
    expect(write.kind).toBe("denied");
    expect(write.text).toContain("/byteseek/llm/");
    expect(await h.tree.get("/byteseek/llm/url")).toBeUndefined();
    const read = await h.runtime.call("tree.get", { key: "/byteseek/llm/key" }, { vid: "r1" });
    expect(read.kind).toBe("denied");
    expect(read.text).not.toContain("sk-secret");
    expect((await h.runtime.call("tree.del", { key: "/byteseek/llm/key" }, { vid: "r1" })).kind).toBe(
      "denied",
    );
    const listing = await h.runtime.call("tree.list", { key: "/byteseek/" }, { vid: "r1" });
    expect(listing.text).not.toContain("llm/");
  });
});
