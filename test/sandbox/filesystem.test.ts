import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { refused, type Sandboxed, useSandboxed } from "./harness.js";

describe("a sandboxed command sees only its grant's files (shell.run and shell impls)", () => {
  let s: Sandboxed;
  useSandboxed((x) => {
    s = x;
  });

  it("writes in the workspace (granted write)", async () => {
    const results = await s.run('echo made > "$PWD/made-$RANDOM" && ls');
    for (const r of results) expect(r.kind, r.text).toBe("ok");
    expect(results[0]!.text).toMatch(/made-\d+/);
  });

  it("cannot write outside the roots: the folder is absent", async () => {
    refused(await s.run(`echo x > ${s.outside}/pwned`), /No such file or directory/);
    expect(existsSync(join(s.outside, "pwned"))).toBe(false);
  });

  it("cannot write into the system folders or the sandbox's root: read-only", async () => {
    refused(await s.run("touch /usr/pwned"), /Read-only file system/);
    refused(await s.run("touch /pwned"), /Read-only file system/);
    expect(existsSync("/usr/pwned")).toBe(false);
  });

  it("cannot write through a workspace symlink pointing out: it resolves inside the sandbox's view", async () => {
    refused(await s.run("echo x > out/pwned"), /No such file or directory/);
    refused(await s.run("cat out/note.txt"), /No such file or directory/);
    expect(existsSync(join(s.outside, "pwned"))).toBe(false);
  });

  it("cannot read or write the store's folder, inside the workspace though it is", async () => {
    refused(await s.run(`cat ${s.store}/CURRENT`), /Permission denied/);
    refused(await s.run(`echo x > ${s.store}/pwned`), /Permission denied|Read-only file system/);
    refused(await s.run(`ls ${s.store}`), /Permission denied/);
    expect(existsSync(join(s.store, "pwned"))).toBe(false);
  });

  it("cannot reach the store's socket", async () => {
    refused(await s.run(`socat -u UNIX-CONNECT:${s.socket} -`), /Permission denied|No such file/);
  });

  it("cannot read a denied path", async () => {
    refused(await s.run("cat private/key.txt"), /Permission denied/);
    refused(await s.run("ls private"), /Permission denied/);
  });

  it("cannot read a planted ~/.ssh/id_ed25519: HOME is a private folder, the real one's credentials are hidden", async () => {
    const results = await s.run('echo "home=$HOME"; cat ~/.ssh/id_ed25519');
    refused(results, /No such file or directory/);
    expect(results[0]!.text).toContain("home=/tmp/home");
    refused(await s.run(`cat ${s.home}/.ssh/id_ed25519`), /Permission denied/);
  });

  it("cannot read the machine's secrets under /etc (it runs as root outside in containers)", async () => {
    refused(await s.run("cat /etc/shadow"), /Permission denied|No such file/);
    expect(readFileSync("/etc/passwd", "utf8").length).toBeGreaterThan(0);
    const passwd = await s.run("head -1 /etc/passwd");
    for (const r of passwd) expect(r.kind, r.text).toBe("ok");
  });

  it("gets a private /tmp of its own per call", async () => {
    const [one] = await s.run("echo x > /tmp/left && ls /tmp");
    expect(one!.text).toContain("left");
    const [two] = await s.run("ls -A /tmp");
    expect(two!.text).not.toContain("left");
  });

  it("refuses writes in a read-only root (a run granted read, not write)", async () => {
    refused(await s.run("touch ro-attempt", "reader"), /Read-only file system/);
    expect(existsSync(join(s.ws, "ro-attempt"))).toBe(false);
    const read = await s.run("ls", "reader");
    for (const r of read) expect(r.kind, r.text).toBe("ok");
  });

  it("does not see the workspace at all without read or write", async () => {
    refused(await s.run(`ls ${s.ws}`, "blind"), /No such file or directory/);
  });
});
