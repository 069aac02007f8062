/**
 * Issue 4, interfaces: every result kind produced through HTTP (`POST /v1/tools/:name/call`) and
 * through the CLI (`kvspace call`, embedded and against the server), each landing a record.
 * The runtime's own tests cover the in-process API.
 */
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import type { ToolResult } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { json } from "../../tree/value.js";
import { type CliServer, cliEnv, startCliServer, tempDirs } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";

const temps = tempDirs("byteseek-interfaces-");

/** One call per kind: [kind, tool, args, approve?]. */
const KINDS: Array<[ToolResult["kind"], string, unknown, boolean?]> = [
  ["ok", "tree.get", { key: "/notes/a" }],
  ["vet", "nope.tool", {}],
  ["arg", "tree.get", { key: 42 }],
  ["denied", "tree.del", { key: "/notes/a" }],
  ["runtime", "edit.read", { path: "missing.txt" }],
];

/** A seeded store where tree.del needs approval. */
async function prepare(tree: Tree): Promise<void> {
  await tree.set("/notes/a", { kind: "char/utf8", value: "hi" });
  const policy = await tree.get(POLICY_KEY);
  const current = policy?.kind === "json" ? (policy.value.value as Record<string, unknown>) : {};
  await tree.set(POLICY_KEY, json({ ...current, confirm: ["tree.del"] } as never), { force: true, ro: true });
}

async function recordAt(tree: Tree, key: string | undefined): Promise<Record<string, unknown>> {
  expect(key).toBeDefined();
  const node = await tree.get(key as string);
  expect(node?.kind).toBe("json");
  return (node as { value: { value: Record<string, unknown> } }).value.value;
}

let server: CliServer;
beforeAll(async () => {
  server = await startCliServer({
    store: join(await temps.make(), "store"),
    workspace: await temps.make(),
    seed: true,
  });
  await prepare(server.tree);
});
afterAll(async () => {
  await server.close();
  await temps.removeAll();
});

async function post(path: string, body: unknown) {
  const res = await request(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe("POST /v1/tools/:name/call", () => {
  for (const [kind, name, args] of KINDS) {
    it(`answers 200 with kind ${kind} and records the call`, async () => {
      const { status, body } = await post(`/v1/tools/${name}/call`, { args, vid: "h1" });
      expect(status).toBe(200);
      expect(body.kind).toBe(kind);
      expect(body.isError).toBe(kind !== "ok");
      const record = await recordAt(server.tree, body.record as string);
      expect(record).toMatchObject({ name, args, kind, text: body.text });
      expect(body.record).toMatch(/^\/byteseek\/tool\/h1\/\d+$/);
    });
  }

  it("runs a confirm tool once the call carries approve, and records under vid http by default", async () => {
    const { status, body } = await post("/v1/tools/tree.del/call", { args: { key: "/gone" }, approve: true });
    expect(status).toBe(200);
    expect(body.kind).toBe("ok");
    expect(body.record).toMatch(/^\/byteseek\/tool\/http\/\d+$/);
  });

  it("answers 400 for a malformed request, and records nothing", async () => {
    const before = (await server.tree.list("/byteseek/tool/")).children.length;
    for (const bad of [[1], { args: {}, vid: "../x" }, { args: {}, extra: 1 }, { approve: "yes" }]) {
      const { status, body } = await post("/v1/tools/tree.get/call", bad);
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    }
    expect((await server.tree.list("/byteseek/tool/")).children.length).toBe(before);
  });
});

describe("GET /v1/tools", () => {
  it("lists valid declarations as a model sees them and invalid ones with their problems", async () => {
    await server.tree.set(
      "/byteseek/tools/bad.tool",
      json({
        name: "bad.tool",
        params: { type: "object" },
        impl: { kind: "builtin", ref: "no.such" },
      } as never),
    );
    const res = await request(`${server.url}/v1/tools`);
    expect(res.statusCode).toBe(200);
    const body = (await res.body.json()) as { tools: Array<Record<string, unknown>>; invalid: unknown[] };
    expect(body.tools.find((t) => t.name === "tree.get")).toMatchObject({
      name: "tree.get",
      key: "/byteseek/tools/tree.get",
      description: expect.any(String),
      snippet: expect.any(String),
      params: { type: "object" },
      enabled: true,
      impl: "builtin",
    });
    expect(body.tools.find((t) => t.name === "tree.del")).toMatchObject({ confirm: false });
    expect(body.invalid).toEqual([
      {
        name: "bad.tool",
        key: "/byteseek/tools/bad.tool",
        problems: expect.arrayContaining([expect.any(String)]),
      },
    ]);
    await server.tree.del("/byteseek/tools/bad.tool");
  });

  it("shows both routes and their schemas in /openapi.json", async () => {
    const res = await request(`${server.url}/openapi.json`);
    const doc = (await res.body.json()) as { paths: Record<string, Record<string, unknown>> };
    expect(doc.paths["/v1/tools"]?.get).toBeDefined();
    expect(JSON.stringify(doc.paths["/v1/tools/{name}/call"]?.post)).toContain("approve");
  });
});

describe("kvspace call", () => {
  for (const mode of ["embedded", "http"] as const) {
    describe(mode, () => {
      let where = "";
      let tree: Tree;
      let workspace = "";
      beforeAll(async () => {
        workspace = await temps.make();
        if (mode === "http") {
          where = server.url;
          tree = server.tree;
          return;
        }
        where = join(await temps.make(), "store");
        // Seed and prepare through the CLI's own runtime, then edit the policy as a person would.
        expect((await runInProcess(["tools", "--check"], { env: cliEnv(where) })).code).toBe(0);
        const t = await openTree({ backend: "classic", location: where });
        await prepare(t);
        await t.close();
      });

      for (const [kind, name, args] of KINDS) {
        it(`exits ${kind === "ok" ? 0 : 3} for kind ${kind} and records the call`, async () => {
          const vid = `c-${mode}`;
          const result = await runInProcess(["call", name, JSON.stringify(args), "--json", "--vid", vid], {
            env: cliEnv(where, { BYTESEEK_WORKSPACE: workspace }),
          });
          expect(result.stderr).toBe("");
          expect(result.code).toBe(kind === "ok" ? 0 : 3);
          const out = JSON.parse(result.stdout) as ToolResult;
          expect(out.kind).toBe(kind);
          expect(out.record).toMatch(new RegExp(`^/byteseek/tool/${vid}/\\d+$`));
          if (mode === "embedded") {
            tree = await openTree({ backend: "classic", location: where });
          }
          try {
            expect(await recordAt(tree, out.record)).toMatchObject({ name, args, kind, text: out.text });
          } finally {
            if (mode === "embedded") await tree.close();
          }
        });
      }
    });
  }
});
