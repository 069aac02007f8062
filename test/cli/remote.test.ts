import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { str } from "../../tree/value.js";
import { type CliServer, cliEnv, startCliServer, tempDirs } from "./cli-server.js";
import { runInProcess } from "./in-process.js";
import { assertBuilt, runCli } from "./run-cli.js";

const temps = tempDirs("kvspace-remote-");
afterAll(() => temps.removeAll());

/** Waits (polling, no time bound of its own: the test's timeout is the liveness bound) until `check` holds. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

describe("kvspace against a server (KVSPACE=http://…)", () => {
  let server: CliServer;
  let workspace = "";
  beforeAll(async () => {
    workspace = await temps.make();
    server = await startCliServer({
      store: join(await temps.make(), "store"),
      workspace,
      seed: true,
      token: "s3cret",
    });
  });
  afterAll(() => server.close());

  it("works as a child process with BYTESEEK_TOKEN, tool calls included, and exits when done", async () => {
    assertBuilt();
    const env = cliEnv(server.url, { BYTESEEK_TOKEN: "s3cret" });
    expect(await runCli(["set", "/r/a", "int:7"], { env })).toMatchObject({
      stdout: "",
      stderr: "",
      code: 0,
    });
    expect(await runCli(["get", "/r/a"], { env })).toMatchObject({ stdout: "/r/a\tint64:7\n", code: 0 });
    expect(await runCli(["call", "tree.get", '{"key":"/r/a"}'], { env })).toMatchObject({
      stdout: "/r/a (int64, version 1):\n7\n",
      stderr: "",
      code: 0,
    });
    expect((await server.tree.list("/byteseek/tool/cli/")).children).toHaveLength(1);
  });

  it("says a wrong token is refused, exit 1", async () => {
    const result = await runInProcess(["get", "/r/a"], {
      env: cliEnv(server.url, { BYTESEEK_TOKEN: "nope" }),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^.*(401|token|unauthori[sz]ed).*\n$/i);
  });

  it("prints the same prompt as the embedded runtime would, through GET /v1/prompt", async () => {
    const env = cliEnv(server.url, { BYTESEEK_TOKEN: "s3cret" });
    const result = await runInProcess(["prompt", "--vid", "p1"], { env });
    expect(result).toMatchObject({ stderr: "", code: 0 });
    const built = await server.byteseek.prompt("p1");
    expect(result.stdout).toBe(
      `${built.system}\n\n# tools (${built.tools.length})\n${built.tools.map((t) => `${JSON.stringify(t)}\n`).join("")}`,
    );
  });

  it("lists the same catalogue as GET /v1/tools", async () => {
    const env = cliEnv(server.url, { BYTESEEK_TOKEN: "s3cret" });
    const result = await runInProcess(["tools"], { env });
    expect(result.code).toBe(0);
    const { valid } = await server.byteseek.runtime.listTools();
    expect(result.stdout.split("\n").filter(Boolean)).toHaveLength(valid.length);
    const get = valid.find((t) => t.name === "tree.get");
    expect(result.stdout).toContain(`tree.get\tenabled\tbuiltin\t${get?.declaration.snippet}\n`);
  });
});

describe("kvspace watch through a server", () => {
  it("resumes after the server restarts, missing nothing", async () => {
    const store = join(await temps.make(), "store");
    const workspace = await temps.make();
    let server = await startCliServer({ store, workspace });
    const controller = new AbortController();
    let out = "";
    const done = runInProcess(
      ["watch", "/w/", "--from", "1"],
      { env: cliEnv(server.url) },
      {},
      { signal: controller.signal, onStdout: (all) => (out = all) },
    );
    const first = await server.tree.set("/w/a", str("before"));
    await until(() => out.includes("/w/a"));
    await server.close();
    const port = server.port;
    server = await startCliServer({ store, workspace, port });
    const second = await server.tree.set("/w/b", str("after"));
    await until(() => out.includes("/w/b"));
    controller.abort();
    expect((await done).code).toBe(0);
    await server.close();
    expect(out).toBe(
      `${first.rev}\tput\t/w/\tindex\n${first.rev}\tput\t/w/a\tchar/utf8:before\n${second.rev}\tput\t/w/b\tchar/utf8:after\n`,
    );
  });
});
