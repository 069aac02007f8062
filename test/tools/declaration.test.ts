import { describe, expect, it } from "vitest";
import { parseDeclaration } from "../../tools/catalogue/declaration.js";
import { signatureOf } from "../../tools/catalogue/json-schema.js";
import { hostAllowed, Policy } from "../../tools/gate/policy.js";
import { DEFAULT_CREDENTIAL_PATHS } from "../../tools/sandbox/settings.js";

const base = {
  name: "text.wc",
  description: "count words",
  params: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  impl: { kind: "shell", argv: ["wc", "-w", "{text}"] },
};

function problems(decl: unknown): string {
  const r = parseDeclaration(decl);
  return r.ok ? "" : r.problems.join("\n");
}

describe("parseDeclaration", () => {
  it("accepts each impl kind and applies the defaults", () => {
    const r = parseDeclaration(base);
    expect(r.ok && r.declaration).toMatchObject({
      sequential: true,
      confirm: false,
      enabled: true,
      guidelines: [],
    });
    for (const impl of [
      { kind: "builtin", ref: "edit.read" },
      { kind: "http", url: "https://api.example.org/v1/{text}" },
      { kind: "llm", prompt: "/byteseek/prompt/summarize" },
    ])
      expect(parseDeclaration({ ...base, impl }).ok).toBe(true);
    const http = parseDeclaration({ ...base, impl: { kind: "http", url: "https://x.org/" } });
    expect(http.ok && http.declaration.impl).toMatchObject({ method: "POST" });
  });

  it("refuses a name that is not family.verb in lowercase", () => {
    for (const name of ["wc", "Text.wc", "text.wc.x", "text/wc", "a.b c"])
      expect(problems({ ...base, name })).toMatch(/^name:/);
  });

  it("refuses params that are not an object schema, or not a JSON Schema at all", () => {
    expect(problems({ ...base, params: { type: "string" } })).toMatch(/params must be an object schema/);
    expect(problems({ ...base, params: { type: "object", properties: { a: { type: "strng" } } } })).toMatch(
      /params is not a valid JSON Schema/,
    );
  });

  it("refuses an unknown impl kind, an empty argv, unknown fields and a multi-line snippet", () => {
    expect(problems({ ...base, impl: { kind: "ftp" } })).toMatch(/^impl/m);
    expect(problems({ ...base, impl: { kind: "shell", argv: [] } })).toMatch(/^impl.argv/m);
    expect(problems({ ...base, paramz: {} })).toMatch(/paramz/);
    expect(problems({ ...base, snippet: "one\ntwo" })).toMatch(/^snippet: a snippet is one line/m);
    expect(problems({ ...base, impl: { kind: "http", url: "file:///etc/passwd" } })).toMatch(/^impl.url/m);
  });

  it("refuses a placeholder that names no parameter", () => {
    expect(problems({ ...base, impl: { kind: "shell", argv: ["wc", "{file}"] } })).toMatch(
      /impl.argv.1: placeholder \{file\} names no parameter/,
    );
    expect(problems({ ...base, impl: { kind: "shell", argv: ["awk", "{print $1}"] } })).toBe("");
  });

  it("checks the builtin ref and the key name when asked", () => {
    const builtins = new Map();
    expect(parseDeclaration({ ...base, impl: { kind: "builtin", ref: "edit.read" } }, { builtins }).ok).toBe(
      false,
    );
    const r = parseDeclaration(base, { name: "text.other" });
    expect(!r.ok && r.problems[0]).toMatch(/does not match its key/);
  });

  it("never throws, whatever it is given", () => {
    for (const junk of [null, 1, "x", [], { name: 5 }, { ...base, params: null }])
      expect(parseDeclaration(junk).ok).toBe(false);
  });
});

describe("signatureOf", () => {
  it("writes required and optional parameters with their types", () => {
    expect(
      signatureOf("edit.replace", {
        type: "object",
        properties: {
          path: { type: "string" },
          dry: { type: "boolean" },
          mode: { enum: ["a", "b"] },
          lines: { type: "array", items: { type: "integer" } },
        },
        required: ["path"],
      }),
    ).toBe('edit.replace(path: string, dry?: boolean, mode?: "a" | "b", lines?: integer[])');
  });
});

describe("the policy", () => {
  it("has defaults: every run holds what the shipped tools do (files, exec, model, the tree), no hosts, 120 s (1 h at most), no passed variables, 16 MiB of output, commands sandboxed under limits with credentials hidden", () => {
    expect(Policy.parse({})).toEqual({
      workspaceRoots: [],
      deny: [],
      denyKeys: ["/byteseek/llm/"],
      confirm: [],
      approved: [],
      approvalTimeoutMs: 600_000,
      grants: {
        default: { read: true, write: true, exec: true, model: true, net: [], tree: ["/"] },
        runs: [],
      },
      defaultTimeoutMs: 120_000,
      maxTimeoutMs: 3_600_000,
      passEnv: [],
      outputCapBytes: 16 * 1024 * 1024,
      toolList: {
        mode: "auto",
        threshold: 64,
        budgetBytes: 4096,
        alwaysOn: ["edit.*", "shell.run", "tools.search"],
      },
      agentTools: { share: "accepted", maxPerRun: 64, maxBytesPerRun: 256 * 1024 },
      resumeUnknown: "report",
      sandbox: "on",
      limits: {
        cpuSeconds: 3600,
        memoryBytes: 16 * 1024 ** 3,
        residentBytes: 4 * 1024 ** 3,
        processes: 512,
        openFiles: 1024,
        fileSizeBytes: 1024 ** 3,
        tmpBytes: 256 * 1024 ** 2,
      },
      credentialPaths: [...DEFAULT_CREDENTIAL_PATHS],
    });
    expect(Policy.parse({}).credentialPaths).toContain("~/.ssh");
    expect(Policy.safeParse({ agentImpl: ["shell"] }).success).toBe(false);
  });

  it("matches hosts by name, name and port, or wildcard subdomain", () => {
    const u = (s: string) => new URL(s);
    expect(hostAllowed(u("https://api.example.org/x"), ["api.example.org"])).toBe(true);
    expect(hostAllowed(u("http://127.0.0.1:8080/"), ["127.0.0.1:8080"])).toBe(true);
    expect(hostAllowed(u("http://127.0.0.1:8081/"), ["127.0.0.1:8080"])).toBe(false);
    expect(hostAllowed(u("https://a.b.example.org/"), ["*.example.org"])).toBe(true);
    expect(hostAllowed(u("https://example.org.evil.com/"), ["*.example.org", "example.org"])).toBe(false);
    expect(hostAllowed(u("http://[::1]:9/"), ["[::1]:9"])).toBe(true);
    expect(hostAllowed(u("https://x.org/"), [])).toBe(false);
  });
});
