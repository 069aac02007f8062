import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { type KvspaceIo, runKvspace } from "../../cli/run.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { int64, str } from "../../tree/value.js";

/** In-process io: captured stdout/stderr, and a controller standing in for SIGINT. */
function capture() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const controller = new AbortController();
  const io: KvspaceIo = {
    stdin: new PassThrough(),
    stdout,
    stderr,
    // a plain store: these tests are about the dispatcher, not what byteseek ships
    env: { BYTESEEK_SEED: "0" },
    cwd: process.cwd(),
    signal: controller.signal,
  };
  return { io, controller, out: () => out, err: () => err };
}

function until(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const poll = () => (check() ? resolve() : setImmediate(poll));
    poll();
  });
}

describe("kvspace run", () => {
  it("watch follows live changes and exits 0 when interrupted", async () => {
    const tree: Tree = await openTree({ backend: "memory" });
    await tree.set("/w/a", int64(1));
    const { io, controller, out } = capture();
    const done = runKvspace(["watch", "/w/", "--from", "1"], io, { openStore: async () => tree });
    await until(() => out().includes("/w/a"));
    await tree.set("/w/b", str("live"));
    await tree.del("/w/a");
    await until(() => out().includes("delete"));
    controller.abort();
    expect(await done).toBe(0);
    expect(out()).toBe(
      "1\tput\t/w/\tindex\n1\tput\t/w/a\tint64:1\n2\tput\t/w/b\tchar/utf8:live\n3\tdelete\t/w/a\n",
    );
  });

  it("closes the store it opened, also when the command fails", async () => {
    const tree: Tree = await openTree({ backend: "memory" });
    let closed = false;
    const close = tree.close.bind(tree);
    tree.close = async () => {
      closed = true;
      await close();
    };
    const { io, err } = capture();
    expect(await runKvspace(["tree", "/absent/"], io, { openStore: async () => tree })).toBe(1);
    expect(err()).toBe("no directory /absent/\n");
    expect(closed).toBe(true);
  });

  it("does not open the store for a usage error or an unknown subcommand", async () => {
    const { io, err } = capture();
    const refuse = async (): Promise<Tree> => {
      throw new Error("the store was opened");
    };
    expect(await runKvspace(["get"], io, { openStore: refuse })).toBe(2);
    expect(await runKvspace(["frobnicate"], io, { openStore: refuse })).toBe(2);
    expect(err()).toBe(
      "kvspace get: missing <key>\nusage: kvspace get <key>...\nkvspace: unknown command 'frobnicate'\n(kvspace --help lists the commands)\n",
    );
  });

  it("prints an unexpected error's message, not its stack", async () => {
    const { io, err } = capture();
    const broken = async (): Promise<Tree> => {
      throw new Error("disk on fire");
    };
    expect(await runKvspace(["get", "/a"], io, { openStore: broken })).toBe(1);
    expect(err()).toBe("disk on fire\n");
  });
});
