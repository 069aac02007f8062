/**
 * An approval records the credential that decided it (issue 31, item 8): the bearer token (which
 * one, by a hash), the page's cookie session, no credential on a --no-auth server, and the
 * command line on the embedded store. (MCP elicitation: test/mcp/share.test.ts.)
 */
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../server/app.js";
import { tokenId } from "../../server/auth.js";
import { type ApprovalEntry, createApprovals } from "../../tools/gate/approvals.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { runInProcess } from "../cli/in-process.js";
import { silent, tempDir } from "../tools/helpers.js";

const TOKEN = "tok-approval-credential-1";

let dir: Awaited<ReturnType<typeof tempDir>>;
let tree: Tree;
beforeEach(async () => {
  dir = await tempDir("byteseek-approval-cred-");
  tree = await openTree({ backend: "classic", location: `${dir.path}/db` });
});
afterEach(async () => {
  await tree?.close();
  await dir.remove();
});

/** A pending approval of run `vid`, as a waiting call writes it. */
const pending = (vid: string) =>
  createApprovals(tree).requestApproval({
    vid,
    tool: "shell.run",
    args: {},
    reason: "confirm",
    rule: "confirm",
  });

async function serve(token?: string): Promise<{ app: App; url: string }> {
  const app = await buildApp({ tree, logger: silent, web: {}, ...(token ? { token } : {}) });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}` };
}

async function decide(url: string, key: string, headers: Record<string, string>): Promise<ApprovalEntry> {
  const [vid, n] = key.split("/").slice(-2) as [string, string];
  const res = await request(`${url}/v1/approvals/${vid}/${n}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ decision: "approve" }),
  });
  const body = (await res.body.json()) as { entry: ApprovalEntry };
  expect(res.statusCode).toBe(200);
  return body.entry;
}

describe("the credential an approval was decided with", () => {
  it("is the bearer token (named by its hash) or the page's cookie session, as the request carried", async () => {
    const { app, url } = await serve(TOKEN);
    try {
      const byToken = await decide(url, await pending("r-token"), { authorization: `Bearer ${TOKEN}` });
      expect(byToken.decision).toMatchObject({ by: "person (http)", via: `bearer token ${tokenId(TOKEN)}` });
      expect(byToken.decision?.via).not.toContain(TOKEN);
      const traded = await request(`${url}/?token=${TOKEN}`);
      await traded.body.dump();
      const cookie = String(traded.headers["set-cookie"]).split(";")[0] as string;
      const session = cookie.split("=")[1]?.split(".")[0] as string;
      const byCookie = await decide(url, await pending("r-cookie"), { cookie });
      expect(byCookie.decision?.via).toBe(`page cookie session ${session} (token ${tokenId(TOKEN)})`);
      // kept in the tree, for the audit
      const kept = await tree.get("/byteseek/approval/r-cookie/0");
      expect(kept?.kind === "json" && kept.value.value).toMatchObject({
        decision: { via: byCookie.decision?.via },
      });
    } finally {
      await app.close();
    }
  });

  it("says there was none on a server without a credential", async () => {
    const { app, url } = await serve();
    try {
      const entry = await decide(url, await pending("r-none"), {});
      expect(entry.decision?.via).toBe("no credential (the server runs with --no-auth)");
    } finally {
      await app.close();
    }
  });

  it("is the command line for kvspace approve on the embedded store", async () => {
    const key = await pending("r-cli");
    await tree.close();
    const r = await runInProcess(["approve", "r-cli/0"], {
      env: { KVSPACE: `${dir.path}/db`, BYTESEEK_WORKSPACE: dir.path, BYTESEEK_SEED: "0" },
    });
    expect(r.code, r.stderr).toBe(0);
    tree = await openTree({ backend: "classic", location: `${dir.path}/db` });
    const kept = await tree.get(key);
    expect(kept?.kind === "json" && kept.value.value).toMatchObject({
      state: "approved",
      decision: { by: "person (cli)", via: "command line (kvspace approve/deny)" },
    });
  });
});
