/**
 * Builders for the MCP suites: a real byteseek server (classic-level in a temp folder, the runtime
 * on a temp workspace, fastify on an ephemeral loopback port), and the official MCP clients — the
 * 1.x SDK (2025 era: initialize, sessions) and the 2.x client pinned to 2026-07-28 — over Streamable
 * HTTP or over stdio to the real `dist/cli/byteseek.js mcp`.
 */
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import pino from "pino";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createByteseek } from "../../compose/byteseek.js";
import { createMcpHttp, type McpHttp } from "../../mcp/http.js";
import { createLiveTree, type LiveTree } from "../../mcp/live.js";
import { createMcpFactory, type McpFactory } from "../../mcp/server.js";
import { runtimeSource } from "../../mcp/source.js";
import { type App, buildApp } from "../../server/app.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { waitGone } from "../helpers/processes.js";
import { tempDir } from "../server/helpers.js";

export const BYTESEEK_BIN = fileURLToPath(new URL("../../dist/cli/byteseek.js", import.meta.url));

/** A declaration that needs approval: reads a tree key (tree.get) once the person says yes. */
export const CONFIRMED_TOOL = {
  name: "demo.confirmed",
  description: "Read a tree key, once the person approves",
  params: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  confirm: true,
  impl: { kind: "builtin", ref: "tree.get" },
};

export interface McpTestServer {
  app: App;
  tree: Tree;
  url: string;
  workspace: string;
  close(): Promise<void>;
}

/** A real byteseek server with its runtime, on 127.0.0.1 port 0; the workspace holds `dup.txt`. */
export async function startMcpServer(
  options: { token?: string; mcpSessionIdleMs?: number } = {},
): Promise<McpTestServer> {
  const store = await tempDir("byteseek-mcp-store-");
  const ws = await tempDir("byteseek-mcp-ws-");
  await writeFile(join(ws.path, "dup.txt"), "same\nother\nsame\n");
  await mkdir(join(ws.path, "sub"));
  const tree = await openTree({ backend: "classic", location: store.path });
  const logger = pino({ level: "silent" });
  const bs = await createByteseek({ tree, workspace: ws.path, logger, env: {}, sweep: false });
  const app = await buildApp({
    tree,
    logger,
    runtime: bs.runtime,
    web: false,
    ...(options.token ? { token: options.token } : {}),
    ...(options.mcpSessionIdleMs === undefined ? {} : { mcpSessionIdleMs: options.mcpSessionIdleMs }),
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    app,
    tree,
    url,
    workspace: ws.path,
    async close() {
      await app.close();
      await bs.close();
      await tree.close();
      await store.remove();
      await ws.remove();
    },
  };
}

export type Answer = "accept" | "decline";

export interface ClientOptions {
  name?: string;
  /** Declare elicitation and answer every question so; absent: no elicitation capability. */
  elicit?: Answer;
  /** Called on notifications/tools/list_changed. */
  onToolsChanged?: () => void;
  token?: string;
  /** Extra headers on every HTTP request. */
  headers?: Record<string, string>;
  /** `?vid=` on the endpoint. */
  vid?: string;
}

/** What the person is asked, collected by the clients' elicitation handlers. */
export const asked: string[] = [];

function answerOf(answer: Answer) {
  return answer === "accept"
    ? { action: "accept" as const, content: { approve: true } }
    : { action: "decline" as const };
}

function endpoint(url: string, vid?: string): URL {
  return new URL(`${url}/mcp${vid ? `?vid=${encodeURIComponent(vid)}` : ""}`);
}

function headersOf(o: ClientOptions): Record<string, string> {
  return { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...o.headers };
}

/** The 1.x SDK client (2025 era). */
export function clientV1(o: ClientOptions = {}): ClientV1 {
  const client = new ClientV1(
    { name: o.name ?? "v1 test", version: "1.0.0" },
    { capabilities: o.elicit ? { elicitation: {} } : {} },
  );
  if (o.elicit) {
    const answer = o.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return answerOf(answer);
    });
  }
  if (o.onToolsChanged) {
    const on = o.onToolsChanged;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => on());
  }
  return client;
}

export async function connectV1Http(url: string, o: ClientOptions = {}): Promise<ClientV1> {
  const client = clientV1(o);
  await client.connect(new HttpTransportV1(endpoint(url, o.vid), { requestInit: { headers: headersOf(o) } }));
  return client;
}

export async function connectV1Stdio(
  env: Record<string, string>,
  o: ClientOptions = {},
  args: string[] = [],
) {
  const client = clientV1(o);
  await client.connect(
    new StdioTransportV1({
      command: process.execPath,
      args: [BYTESEEK_BIN, "mcp", ...args],
      env: { PATH: process.env.PATH ?? "", ...env },
      stderr: "pipe",
    }),
  );
  return client;
}

/** The 2.x client, pinned to the 2026-07-28 revision (stateless; notifications on a listen stream). */
export function clientV2(o: ClientOptions = {}): ClientV2 {
  const client = new ClientV2(
    { name: o.name ?? "v2 test", version: "2.0.0" },
    {
      capabilities: o.elicit ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  if (o.elicit) {
    const answer = o.elicit;
    client.setRequestHandler("elicitation/create", async (req) => {
      asked.push(req.params.message);
      return answerOf(answer);
    });
  }
  if (o.onToolsChanged) {
    const on = o.onToolsChanged;
    client.setNotificationHandler("notifications/tools/list_changed", async () => on());
  }
  return client;
}

export async function connectV2Http(url: string, o: ClientOptions = {}): Promise<ClientV2> {
  const client = clientV2(o);
  await client.connect(new HttpTransportV2(endpoint(url, o.vid), { requestInit: { headers: headersOf(o) } }));
  return client;
}

export async function connectV2Stdio(env: Record<string, string>, o: ClientOptions = {}) {
  const client = clientV2(o);
  await client.connect(
    new StdioTransportV2({
      command: process.execPath,
      args: [BYTESEEK_BIN, "mcp"],
      env: { PATH: process.env.PATH ?? "", ...env },
      stderr: "pipe",
    }),
  );
  return client;
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content[0]?.text ?? "";
}

/** Writes a declaration over the tree's HTTP API (as a person would). */
export async function declareOverHttp(
  url: string,
  decl: Record<string, unknown>,
  token?: string,
): Promise<void> {
  const res = await fetch(`${url}/v1/tree/byteseek/tools/${decl.name as string}`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ kind: "json", value: decl }),
  });
  if (res.status >= 300) throw new Error(`PUT answered ${res.status}: ${await res.text()}`);
}

/** An McpHttp over a fresh store with CONFIRMED_TOOL declared, without a server in front (a test calls it directly). */
/**
 * The MCP endpoint's handler in process, on a fresh store. `fast` is its fast lane (default on: the
 * suites that compare it with the SDK need it); `{ fast: undefined }` leaves it to BYTESEEK_FAST.
 */
export async function startMcpHttp(
  name: string,
  lanes: { fast?: boolean | undefined } = { fast: true },
): Promise<{ tree: Tree; live: LiveTree; factory: McpFactory; mcp: McpHttp; close(): Promise<void> }> {
  const store = await tempDir(`byteseek-${name}-`);
  const ws = await tempDir(`byteseek-${name}-ws-`);
  const tree = await openTree({ backend: "classic", location: store.path });
  const logger = pino({ level: "silent" });
  const bs = await createByteseek({ tree, workspace: ws.path, logger, env: {}, sweep: false });
  await tree.set(`/byteseek/tools/${CONFIRMED_TOOL.name}`, { kind: "json", value: CONFIRMED_TOOL });
  const live = createLiveTree(tree, logger);
  const factory = createMcpFactory({ source: runtimeSource(tree, bs.runtime), logger, live });
  const mcp = createMcpHttp({
    factory,
    live,
    logger,
    ...(lanes.fast === undefined ? {} : { fast: lanes.fast }),
  });
  return {
    tree,
    live,
    factory,
    mcp,
    async close() {
      await mcp.close();
      live.close();
      await bs.close();
      await tree.close();
      await store.remove();
      await ws.remove();
    },
  };
}

/** Plain 2026-era calls of every outcome, each answered beside the SDK byte for byte as the SDK does (HTTP and stdio). */
export const PLAIN_CALL_CASES: Array<[what: string, name: string, args: Record<string, unknown>]> = [
  ["a call that succeeds", "tree_get", { key: "/byteseek/prompt/truncated" }],
  ["a tool's failure (isError)", "tree_get", { key: "no key" }],
  ["bad arguments", "tree_get", { nope: 1 }],
  ["a tree name", "tree.get", { key: "/byteseek/prompt/truncated" }],
  ["a name no tool has", "no_such_tool", {}],
  ["byteseek_call", "byteseek_call", { name: "tree.get", args: { key: "/byteseek/prompt/truncated" } }],
  ["byteseek_find", "byteseek_find", { query: "tree" }],
  [
    "a tool needing approval, for a client that cannot ask",
    "demo_confirmed",
    { key: "/byteseek/prompt/truncated" },
  ],
];

/** The record's number differs between two calls; everything else must not. */
export const sameRecord = (text: string): string => text.replace(/(\/byteseek\/tool\/[^/"]+\/)\d+/g, "$1N");

type Closable = { close(): Promise<void> };

/**
 * Closes `c`; for a client over a stdio transport, also waits (bounded) until its process is gone:
 * the SDK's close gives up waiting once it has sent SIGKILL (after 2 s + 2 s), so under load a test
 * that opens the store next could find it still locked by the dying process.
 */
async function closeAndWait(c: Closable): Promise<void> {
  const pid = (c as { transport?: { pid?: number | null } }).transport?.pid ?? undefined;
  await c.close();
  if (pid !== undefined && pid !== null) await waitGone(pid);
}

/** `track(c)` closes `c` after the test it was made in (registers the afterEach); `track.closeAll()` closes them now. */
export function closedAfterEach(): (<T extends Closable>(c: T) => T) & { closeAll(): Promise<void> } {
  const open: Closable[] = [];
  const closeAll = async () => {
    await Promise.allSettled(open.splice(0).map(closeAndWait));
  };
  afterEach(closeAll);
  const track = <T extends Closable>(c: T): T => {
    open.push(c);
    return c;
  };
  return Object.assign(track, { closeAll });
}

export interface StdioFolders {
  store: string;
  workspace: string;
  /** KVSPACE and BYTESEEK_WORKSPACE for `byteseek mcp`. */
  env: Record<string, string>;
}

/** A store folder and a workspace holding `files`, made before the suite's tests and removed after. */
export function stdioFolders(name: string, files: Record<string, string>): StdioFolders {
  const made = { store: "", workspace: "", env: {} } as StdioFolders;
  let removers: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    const store = await tempDir(`byteseek-${name}-`);
    const ws = await tempDir(`byteseek-${name}-ws-`);
    removers = [store.remove, ws.remove];
    for (const [file, text] of Object.entries(files)) await writeFile(join(ws.path, file), text);
    Object.assign(made, {
      store: store.path,
      workspace: ws.path,
      // the lane this run is on reaches the byteseek processes too (vitest.config.ts's projects)
      env: {
        KVSPACE: store.path,
        BYTESEEK_WORKSPACE: ws.path,
        ...(process.env.BYTESEEK_FAST === undefined ? {} : { BYTESEEK_FAST: process.env.BYTESEEK_FAST }),
      },
    });
  });
  afterAll(async () => {
    for (const remove of removers) await remove();
  });
  return made;
}

/** Runs `byteseek mcp` with `env` until it exits by itself (a refusal at start): its exit code and stderr. */
export async function mcpExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BYTESEEK_BIN, "mcp"], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((res) => child.on("exit", res));
  return { code, stderr };
}
