import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { str } from "../../tree/value.js";
import { startServerChild } from "../tools/server-child.js";
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
  it("resumes after the server restarts, missing nothing, saying on stderr that it lost the server and reached it again", async () => {
    const store = join(await temps.make(), "store");
    const workspace = await temps.make();
    let server = await startCliServer({ store, workspace });
    const controller = new AbortController();
    let out = "";
    let err = "";
    const done = runInProcess(
      ["watch", "/w/", "--from", "1"],
      { env: cliEnv(server.url) },
      {},
      { signal: controller.signal, onStdout: (all) => (out = all), onStderr: (all) => (err = all) },
    );
    const first = await server.tree.set("/w/a", str("before"));
    await until(() => out.includes("/w/a"));
    await server.close();
    // it says it lost the server, and keeps trying (BYTESEEK_CLIENT_TIMEOUT's 30 s)
    await until(() => err.includes("kvspace: lost"));
    expect(err).toMatch(
      new RegExp(`^kvspace: lost the byteseek server at ${server.url}/ — .+; trying again for up to 30 s\n$`),
    );
    const port = server.port;
    server = await startCliServer({ store, workspace, port });
    const second = await server.tree.set("/w/b", str("after"));
    await until(() => out.includes("/w/b"));
    expect(err).toContain(
      `kvspace: the byteseek server at ${server.url}/ answers again; following from where it left off\n`,
    );
    controller.abort();
    expect((await done).code).toBe(0);
    await server.close();
    expect(out).toBe(
      `${first.rev}\tput\t/w/\tindex\n${first.rev}\tput\t/w/a\tchar/utf8:before\n${second.rev}\tput\t/w/b\tchar/utf8:after\n`,
    );
  });
});

describe("kvspace watch -q through a server that goes away", () => {
  it("leaves the lost-server note out, and still ends with the error and the --from revision", async () => {
    const server = await startCliServer({
      store: join(await temps.make(), "store"),
      workspace: await temps.make(),
    });
    let out = "";
    const done = runInProcess(
      ["watch", "-q", "/q/"],
      { env: cliEnv(server.url, { BYTESEEK_CLIENT_TIMEOUT: "300" }) },
      {},
      { onStdout: (all) => (out = all) },
    );
    for (let n = 0; !out.includes("/q/k\t"); n++) {
      await server.tree.set("/q/k", str(String(n)));
      await new Promise((r) => setTimeout(r, 10));
    }
    await server.close();
    const ended = await done;
    expect(ended.code).toBe(1);
    expect(ended.stderr).not.toContain("kvspace: lost");
    expect(ended.stderr).toMatch(
      /^kvspace watch: the byteseek server at .* went away, and nothing answered there for 0\.3 s; the watch ended\.\n.* --from \d+ \(once the server answers again\)\n$/,
    );
  });
});

describe("kvspace against a server that stops answering", () => {
  it("fails kvspace get with exit 1, saying what to do, when the server takes the connection and never answers", async () => {
    assertBuilt();
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((done) => silent.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    try {
      // Before the bound, kvspace waited forever (and this test for its timeout).
      const r = await runCli(["get", "/a"], { env: cliEnv(url, { BYTESEEK_CLIENT_TIMEOUT: "300" }) });
      expect(r).toMatchObject({ stdout: "", code: 1 });
      expect(r.stderr).toBe(
        `the byteseek server at ${url}/ did not answer GET /healthz within 0.3 s: check that it is running and not stuck (its log says what it is doing), or give it longer with BYTESEEK_CLIENT_TIMEOUT=<ms> (now 300)\n`,
      );
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((done) => silent.close(done));
    }
  });

  it("ends kvspace watch whose server was killed and never came back: a note on stderr, exit 1, and the --from revision", async () => {
    assertBuilt();
    const store = join(await temps.make(), "store");
    const server = await startServerChild(
      // no seeding: a plain store starts sooner
      { KVSPACE: store, BYTESEEK_WORKSPACE: await temps.make(), BYTESEEK_TOKEN: "", BYTESEEK_SEED: "0" },
      ["--no-auth"],
    );
    let out = "";
    let exited = false;
    const watch = runCli(["watch", "/gone/"], {
      // the bound on a busy machine's answers, and on the wait for a server that went away
      env: cliEnv(server.url, { BYTESEEK_CLIENT_TIMEOUT: "1000" }),
      onStdout: (all) => (out = all),
    });
    void watch.finally(() => (exited = true));
    try {
      // The watch starts after its first answer; write until it has seen one (or it ended: below says why).
      for (let n = 0; !out.includes("/gone/k\t") && !exited; n++) {
        expect((await server.json("PUT", "/v1/tree/gone/k", n)).status).toBe(200);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      server.child.kill("SIGKILL");
    }
    // Before, the watch waited for the server forever, saying nothing (and this test for its timeout).
    const ended = await watch;
    expect(ended.stdout, ended.stderr).toContain("/gone/k\t");
    expect(ended.code).toBe(1);
    const rev = Number(ended.stdout.trim().split("\n").at(-1)!.split("\t")[0]);
    const [note, ...rest] = ended.stderr.split("\n");
    expect(note).toMatch(
      new RegExp(`^kvspace: lost the byteseek server at ${server.url}/ — .+; trying again for up to 1 s$`),
    );
    expect(rest.join("\n")).toBe(
      `kvspace watch: the byteseek server at ${server.url}/ went away, and nothing answered there for 1 s; the watch ended.\n` +
        `Every change before revision ${rev + 1} was printed: to go on without missing one, run kvspace watch /gone/ --from ${rev + 1} (once the server answers again)\n`,
    );
  });
});
