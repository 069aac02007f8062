import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBuiltins } from "../../compose/byteseek.js";
import {
  BuiltinImpl,
  HttpImpl,
  IMPL_KINDS,
  LlmImpl,
  parseDeclaration,
  ShellImpl,
  ToolAnnotations,
  ToolDeclaration,
} from "../../tools/catalogue/declaration.js";
import { seedTools } from "../../tools/catalogue/seed.js";
import { POLICY_KEY, Policy } from "../../tools/gate/policy.js";
import { Grant, Grants, RunGrant } from "../../tools/gate/powers.js";
import { builtinRegistry } from "../../tools/impl/builtin.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type Json, json, str } from "../../tree/value.js";

/**
 * The docs are checked against the code: every json block of docs/TOOLS.md validates against the
 * real schemas (a declaration, or a policy), the field tables name every field the schemas have,
 * the examples run through the real runtime, and every relative link in the README and docs/
 * reaches a file (and heading) inside the repository.
 */

const ROOT = resolve(import.meta.dirname, "..", "..");
const TOOLS_MD = join(ROOT, "docs", "TOOLS.md");
const toolsDoc = readFileSync(TOOLS_MD, "utf8");

/** The bodies of the fenced blocks whose info string is exactly `lang`. */
function fenced(markdown: string, lang: string): string[] {
  const out: string[] = [];
  const re = /^```([^\n]*)\n([\s\S]*?)^```\s*$/gm;
  for (const m of markdown.matchAll(re)) if ((m[1] ?? "").trim() === lang) out.push(m[2] ?? "");
  return out;
}

/** The json blocks of docs/TOOLS.md, parsed: those with an `impl` are declarations, the rest policies. */
function examples(): { declarations: Array<Record<string, unknown>>; policies: unknown[] } {
  const declarations: Array<Record<string, unknown>> = [];
  const policies: unknown[] = [];
  for (const block of fenced(toolsDoc, "json")) {
    const value = JSON.parse(block) as Record<string, unknown>;
    if ("impl" in value) declarations.push(value);
    else policies.push(value);
  }
  return { declarations, policies };
}

/** The markdown files the repository ships as documentation. */
function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(ROOT, "docs", f));
  return [join(ROOT, "README.md"), ...docs];
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6} +(.+?) *#*$/gm)) out.add(slug(m[1] ?? ""));
  return out;
}

/** Markdown links `[text](target)` outside code blocks and code spans. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```\s*$/gm, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
}

describe("docs/TOOLS.md examples", () => {
  it("are each a declaration that validates against the real schema, one for every impl kind", () => {
    const { declarations } = examples();
    const builtins = builtinRegistry(createBuiltins());
    for (const decl of declarations) {
      const parsed = parseDeclaration(decl, { builtins, name: String(decl.name) });
      expect(parsed.ok ? [] : parsed.problems, String(decl.name)).toEqual([]);
    }
    const kinds = new Set(declarations.map((d) => (d.impl as { kind: string }).kind));
    expect([...kinds].sort()).toEqual([...IMPL_KINDS].sort());
  });

  it("of a policy validate against the real policy schema, unknown fields refused", () => {
    const { policies } = examples();
    expect(policies.length).toBeGreaterThanOrEqual(2);
    for (const policy of policies) {
      const parsed = Policy.safeParse(policy);
      expect(parsed.success ? [] : parsed.error.issues, JSON.stringify(policy)).toEqual([]);
    }
  });

  it("in the commands that write the policy validate too (kvspace set and the HTTP body)", () => {
    const written: unknown[] = [];
    for (const file of docFiles()) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/kvspace set \/byteseek\/policy 'json:(\{[^']*\})' ro --force/g))
        if (m[1] !== "{…}") written.push(JSON.parse(m[1] as string)); // `{…}` stands for "the policy"
      for (const m of text.matchAll(/v1\/tree\/byteseek\/policy\?force=1'[\s\S]*?-d '(\{[^']*\})'/g)) {
        const body = JSON.parse(m[1] as string) as { kind: string; ro: boolean; value: unknown };
        expect(body).toMatchObject({ kind: "json", ro: true });
        written.push(body.value);
      }
    }
    expect(written.length).toBeGreaterThanOrEqual(2);
    for (const policy of written) {
      const parsed = Policy.safeParse(policy);
      expect(parsed.success ? [] : parsed.error.issues, JSON.stringify(policy)).toEqual([]);
    }
  });

  it("include the whole default policy, as the code writes it", () => {
    const { policies } = examples();
    expect(policies).toContainEqual(JSON.parse(JSON.stringify(Policy.parse({}))));
  });

  it("name every field of the declaration, its impl kinds and the policy in a table", () => {
    const documented = new Set([...toolsDoc.matchAll(/^\| `([A-Za-z.]+)` \|/gm)].map((m) => m[1]));
    const fields = [
      ...Object.keys(ToolDeclaration.shape),
      ...Object.keys(BuiltinImpl.shape),
      ...Object.keys(ShellImpl.shape),
      ...Object.keys(HttpImpl.shape),
      ...Object.keys(LlmImpl.shape),
      ...Object.keys(Policy.shape).filter((k) => k !== "grants"),
      ...Object.keys(Grants.shape).map((k) => `grants.${k}`),
    ];
    expect(fields.filter((f) => !documented.has(f))).toEqual([]);
    // the nested ones are named in prose
    const nested = [
      ...Object.keys(Grant.shape),
      ...Object.keys(RunGrant.shape),
      ...Object.keys(ToolAnnotations.shape),
    ];
    expect(nested.filter((f) => !toolsDoc.includes(`\`${f}\``))).toEqual([]);
  });
});

describe("docs/TOOLS.md examples, run", () => {
  let dir: string;
  let workspace: string;
  let tree: Tree;
  let runtime: Runtime;
  let server: Server;
  let origin: string;
  const seen: Array<{ method: string; url: string; headers: IncomingMessage["headers"] }> = [];
  const byName = (name: string) => {
    const decl = examples().declarations.find((d) => d.name === name);
    if (!decl) throw new Error(`docs/TOOLS.md has no example named ${name}`);
    return structuredClone(decl);
  };
  const declare = (decl: Record<string, unknown>) =>
    tree.set(`/byteseek/tools/${String(decl.name)}`, json(decl as Json));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "byteseek-docs-"));
    workspace = join(dir, "ws");
    await mkdir(join(workspace, "notes"), { recursive: true });
    tree = await openTree({ backend: "memory" });
    const builtins = createBuiltins();
    await seedTools({ tree, builtins });
    runtime = createRuntime({
      tree,
      builtins,
      logger: pino({ level: "silent" }),
      workspace,
      // the model is the one stand-in: it answers what it was asked with
      llm: {
        async complete(prompt, args) {
          return `summary by ${prompt.split(" ")[0]}: ${JSON.stringify(args)}`;
        },
      },
    });
    server = createServer((req, res) => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ full_name: req.url, stargazers_count: 1 }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await runtime.close();
    await tree.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it("the shell example counts a file's lines", async () => {
    await writeFile(join(workspace, "three.txt"), "a\nb\nc\n");
    await declare(byName("text.wc"));
    const r = await runtime.call("text.wc", { path: "three.txt" }, { vid: "docs" });
    expect(r.kind).toBe("ok");
    expect(r.text.trim()).toBe("3 three.txt");
  });

  it("the builtin alias reads a note", async () => {
    await writeFile(join(workspace, "notes", "today.md"), "hello from the note\n");
    await declare(byName("notes.read"));
    const r = await runtime.call("notes.read", { path: "notes/today.md" }, { vid: "docs" });
    expect(r.kind).toBe("ok");
    expect(r.text).toContain("hello from the note");
  });

  it("the http example is refused until the policy grants its host, then makes its GET", async () => {
    const decl = byName("github.repo");
    const impl = decl.impl as { url: string };
    impl.url = impl.url.replace("https://api.github.com", origin);
    await declare(decl);
    const args = { owner: "nodejs", repo: "node" };
    const refused = await runtime.call("github.repo", args, { vid: "docs" });
    expect(refused.kind).toBe("denied");
    expect(refused.text).toContain('"net"');
    await tree.set(
      POLICY_KEY,
      json({
        grants: {
          default: { read: true, write: true, exec: true, model: true, net: ["127.0.0.1"], tree: ["/"] },
        },
      }),
      {
        ro: true,
        force: true,
      },
    );
    const r = await runtime.call("github.repo", args, { vid: "docs" });
    expect(r.kind).toBe("ok");
    expect(seen.at(-1)).toMatchObject({
      method: "GET",
      url: "/repos/nodejs/node",
      headers: { accept: "application/vnd.github+json", "user-agent": "byteseek" },
    });
  });

  it("the llm example sends its prompt and the arguments to the model", async () => {
    // the command the page gives to write the prompt
    const prompt = /kvspace set \/byteseek\/prompt\/summarize 'string:([^']*)'/.exec(toolsDoc)?.[1];
    expect(prompt).toBeDefined();
    await tree.set("/byteseek/prompt/summarize", str(prompt as string));
    await declare(byName("text.summarize"));
    const r = await runtime.call("text.summarize", { text: "a long text" }, { vid: "docs" });
    expect(r.kind).toBe("ok");
    expect(r.text).toBe('summary by Summarize: {"text":"a long text"}');
  });
});

describe("links in README.md and docs/", () => {
  it("point at files inside the repository, and at headings those files have", () => {
    const broken: string[] = [];
    for (const file of docFiles()) {
      const text = readFileSync(file, "utf8");
      for (const target of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // a URL
        const [path = "", anchor] = target.split("#");
        const to = path === "" ? file : resolve(dirname(file), decodeURI(path));
        const where = `${relative(ROOT, file)}: ${target}`;
        if (relative(ROOT, to).startsWith("..")) broken.push(`${where} (outside the repository)`);
        else if (!existsSync(to)) broken.push(`${where} (no such file)`);
        else if (anchor && statSync(to).isFile() && to.endsWith(".md")) {
          if (!anchors(readFileSync(to, "utf8")).has(anchor)) broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("name no path outside the repository", () => {
    for (const file of docFiles())
      expect(readFileSync(file, "utf8"), relative(ROOT, file)).not.toMatch(/\.\.\/shared|\/work\//);
  });

  it("the README links both docs", () => {
    const readme = links(readFileSync(join(ROOT, "README.md"), "utf8"));
    expect(readme).toContain("docs/ARCHITECTURE.md");
    expect(readme).toContain("docs/TOOLS.md");
  });

  it("the README shows every screenshot under docs/screenshots/", () => {
    const readme = links(readFileSync(join(ROOT, "README.md"), "utf8"));
    const shots = readdirSync(join(ROOT, "docs", "screenshots")).filter((f) => f.endsWith(".png"));
    expect(shots.length).toBeGreaterThan(0);
    expect(shots.filter((f) => !readme.includes(`docs/screenshots/${f}`))).toEqual([]);
  });
});
