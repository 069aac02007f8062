import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../tools/helpers.js";
import { type ServerChild, startServerChild } from "../tools/server-child.js";

// Values no command may ever see, each under a name the server reads or a person would export.
const SECRETS = {
  BYTESEEK_TOKEN: "tok-7f3a9c1e5b2d4068",
  BYTESEEK_LLM_KEY: "llm-key-1b9e77c2d0a4",
  OPENAI_API_KEY: "sk-openai-5e8d2c91f7a3",
  ANTHROPIC_API_KEY: "sk-ant-3c6b0e9a1d47",
  GH_PAT: "ghp_9a8b7c6d5e4f3a2b",
  AWS_SECRET_ACCESS_KEY: "aws-2f4e6a8c0b1d",
  // names the first pattern missed, a URL with a password, and a copy under an innocent name
  GITHUB_AUTH: "gh-auth-4d2c8e1a9b",
  NPM_CONFIG__AUTH: "npm-auth-7e3f1a0c5d",
  PGPASSWORD: "pg-pass-0a9b8c7d6e",
  DATABASE_URL: "postgres://app:db-pw-3e5a7c9b@db.example/app",
  BUILD_LABEL: "ghp_9a8b7c6d5e4f3a2b",
};

function leaked(text: string): string[] {
  return Object.entries(SECRETS)
    .filter(([, value]) => text.includes(value))
    .map(([name]) => name);
}

describe("with the sandbox off, commands still never see the server's secrets (a real server child process)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerChild;
  beforeAll(async () => {
    dir = await tempDir("byteseek-secrets-");
    await mkdir(join(dir.path, "ws"));
    server = await startServerChild({
      ...SECRETS,
      KVSPACE: join(dir.path, "store"),
      BYTESEEK_WORKSPACE: join(dir.path, "ws"),
      BYTESEEK_LLM_API: "openai",
      BYTESEEK_LLM_URL: "http://127.0.0.1:9/v1",
      BYTESEEK_LLM_MODEL: "m",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      PROJECT_SETTING: "plain-but-not-allowed",
    });
    // the wipe is what holds with the sandbox off (with it on, no command sees the server's /proc)
    const policy = (await server.json("GET", "/v1/tree/byteseek/policy")).body as { value: object };
    await server.json("PUT", "/v1/tree/byteseek/policy?force=1", {
      kind: "json",
      value: { ...policy.value, sandbox: "off" },
      ro: true,
    });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    await dir?.remove();
  });

  it("gives `env` only the allow-list, the call's TMPDIR and its mark", async () => {
    const r = await server.call("shell.run", { command: "env" });
    expect(r.kind, r.text).toBe("ok");
    expect(leaked(r.text)).toEqual([]);
    const names = r.text
      .split("\n")
      .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
      .map((l) => l.slice(0, l.indexOf("=")));
    for (const name of names)
      expect(["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "BYTESEEK_CALL", "PWD", "SHLVL", "_"]).toContain(
        name,
      );
    expect(names).toContain("PATH");
    expect(names).toContain("BYTESEEK_CALL");
    expect(r.text).not.toContain("PROJECT_SETTING");
  });

  it("shows none of them in /proc/$PPID/environ nor in the server's /proc/<pid>/environ", async () => {
    const parent = await server.call("shell.run", {
      command: "tr '\\0' '\\n' < /proc/$PPID/environ; echo ppid=$PPID",
    });
    expect(parent.kind, parent.text).toBe("ok");
    expect(parent.text).toContain(`ppid=${server.pid}`);
    expect(leaked(parent.text)).toEqual([]);
    // the rest of the environment is still there: the wipe took out only the secrets
    expect(parent.text).toContain("PROJECT_SETTING=plain-but-not-allowed");
    const direct = await server.call("shell.run", {
      command: `tr '\\0' '\\n' < /proc/${server.pid}/environ`,
    });
    expect(direct.kind, direct.text).toBe("ok");
    expect(leaked(direct.text)).toEqual([]);
  });

  it("holds none of them in its own environ, read from outside by the test (by name and by value)", async () => {
    const environ = await readFile(`/proc/${server.pid}/environ`, "latin1");
    expect(leaked(environ)).toEqual([]);
    expect(environ).toContain("PROJECT_SETTING=plain-but-not-allowed");
  });

  it("still authenticates with the token it withdrew from its environment", async () => {
    const res = await fetch(`${server.url}/v1/tree/byteseek/policy`);
    expect(res.status).toBe(401);
    expect((await server.json("GET", "/v1/tree/byteseek/policy")).status).toBe(200);
  });

  it("passes a name the policy lists in passEnv, and only to the command; never the server's token", async () => {
    const policy = (await server.json("GET", "/v1/tree/byteseek/policy")).body as {
      value: Record<string, unknown>;
    };
    const put = await server.json("PUT", "/v1/tree/byteseek/policy?force=1", {
      kind: "json",
      value: { ...policy.value, passEnv: ["GH_PAT", "BYTESEEK_TOKEN"] },
      ro: true,
    });
    expect(put.status).toBeLessThan(300);
    const r = await server.call("shell.run", {
      command: 'echo "pat=$GH_PAT"; echo "token=[$BYTESEEK_TOKEN]"; tr "\\0" "\\n" < /proc/$PPID/environ',
    });
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toContain(`pat=${SECRETS.GH_PAT}`);
    expect(r.text).toContain("token=[]");
    // the parent still holds none: the value lives in the server's memory, not its environ
    expect(leaked(r.text.replace(`pat=${SECRETS.GH_PAT}`, ""))).toEqual([]);
  });

  it("gives a declared shell tool the same environment", async () => {
    const decl = {
      name: "probe.env",
      description: "prints its environment",
      params: { type: "object", properties: {} },
      impl: {
        kind: "shell",
        argv: ["sh", "-c", "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ"],
        env: { OWN: "declared" },
      },
    };
    expect((await server.json("PUT", "/v1/tree/byteseek/tools/probe.env", decl)).status).toBeLessThan(300);
    const r = await server.call("probe.env", {});
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toContain("OWN=declared");
    const [own, parent] = r.text.split("---");
    expect(own).not.toContain("PROJECT_SETTING");
    expect(parent).toContain("PROJECT_SETTING");
    expect(leaked(r.text.replace(`GH_PAT=${SECRETS.GH_PAT}`, ""))).toEqual([]);
  });
});
