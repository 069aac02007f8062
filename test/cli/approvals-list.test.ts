import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApprovals } from "../../tools/gate/approvals.js";
import { openTree } from "../../tree/index.js";
import { cliEnv, tempDirs } from "./cli-server.js";
import { assertBuilt, runCli } from "./run-cli.js";

describe("kvspace approvals", () => {
  const dirs = tempDirs("byteseek-cli-approvals-");
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    assertBuilt();
    const store = await dirs.make();
    env = cliEnv(store, { BYTESEEK_WORKSPACE: await dirs.make() });
    const tree = await openTree({ backend: "classic", location: store });
    const hostile = "notes.md\r\u001b[2K[y]approved\u202e";
    await createApprovals(tree).requestApproval({
      vid: "r1",
      tool: "text.wc",
      args: { path: hostile },
      decl: { key: "/byteseek/tools/text.wc", modRev: 7, hash: "ef".repeat(32) },
      effect: { kind: "shell", argv: ["wc", "-w", hostile], text: `wc -w '${hostile}'` },
      owner: "run r1",
      reason: "text.wc needs a person's approval (rule: declaration.confirm)",
      rule: "declaration.confirm",
    });
    await tree.close();
  });
  afterAll(() => dirs.removeAll());

  it("lists each waiting call with what it runs, its owner and hash, hostile characters spelled out", async () => {
    const r = await runCli(["approvals"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        "r1/0\ttext.wc\twc -w 'notes.md\\r\\x1b[2K[y]approved\\u202e'",
        "  text.wc needs a person's approval (rule: declaration.confirm)",
        "  declared by run r1, sha256 efefefefefef",
        '  args: {"path":"notes.md\\r\\u001b[2K[y]approved\\u202e"}',
        "",
      ].join("\n"),
    );
  });
});
