/**
 * `byteseek mcp [--vid V]`: MCP over stdio on the store KVSPACE names — a folder (the runtime
 * in-process), `etcd://…` (likewise, sharing the tree with the servers on it), or `http://…` of a
 * running byteseek server (its tree and its tool routes, so the server's runtime makes and records
 * every call). stdout carries the protocol only; logs go to stderr (BYTESEEK_LOG_LEVEL, default
 * warn). Answers once the client closes stdin (or on SIGINT/SIGTERM).
 */
import { resolve } from "node:path";
import pino, { type Logger } from "pino";
import { createByteseek } from "../agent/byteseek.js";
import { createLiveTree } from "../mcp/live.js";
import { createMcpFactory } from "../mcp/server.js";
import { type McpSource, runtimeSource } from "../mcp/source.js";
import { serveMcpStdio } from "../mcp/stdio.js";
import { openHttpTree } from "../tree/http/index.js";
import type { Tree } from "../tree/types.js";
import { openStore, storeSpec } from "./open-store.js";
import { openToolsClient } from "./tools-client.js";

interface Opened {
  source: McpSource;
  close(): Promise<void>;
}

async function openSource(env: NodeJS.ProcessEnv, cwd: string, logger: Logger): Promise<Opened> {
  const spec = storeSpec(env, cwd);
  if (spec.backend === "http") {
    const tree = await openHttpTree(new URL(spec.url), env);
    const tools = await openToolsClient({ tree, env, cwd, stderr: process.stderr });
    try {
      // The tree's check reaches an open route: make sure the token opens the tool routes too.
      await tools.list();
    } catch (err) {
      await tools.close();
      await tree.close();
      throw err;
    }
    return {
      source: {
        tree,
        async tools() {
          return (await tools.list()).tools;
        },
        call: (name, args, options) => tools.call(name, args, options),
        async systemPrompt(vid) {
          return (await tools.prompt(vid)).system;
        },
      },
      async close() {
        await tools.close();
        await tree.close();
      },
    };
  }
  const tree: Tree = await openStore({ env, cwd, logger: logger.child({ part: "tree" }) });
  try {
    const bs = await createByteseek({
      tree,
      workspace: resolve(cwd, env.BYTESEEK_WORKSPACE || "."),
      logger,
      env,
      ...(spec.backend === "classic" ? { storePath: spec.location } : {}),
    });
    return {
      source: runtimeSource(tree, bs.runtime),
      async close() {
        await bs.close();
        await tree.close();
      },
    };
  } catch (err) {
    await tree.close();
    throw err;
  }
}

export async function runMcp(options: {
  vid?: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): Promise<number> {
  const { env, cwd, vid } = options;
  const logger = pino({ level: env.BYTESEEK_LOG_LEVEL || "warn" }, pino.destination(2)).child({
    part: "mcp",
  });
  const opened = await openSource(env, cwd, logger);
  const live = createLiveTree(opened.source.tree, logger);
  const factory = createMcpFactory({ source: opened.source, logger, live });
  const stdio = serveMcpStdio({ factory, live, logger, ...(vid === undefined ? {} : { vid }) });
  await new Promise<void>((done) => {
    const stop = () => done();
    process.stdin.once("end", stop);
    process.stdin.once("close", stop);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await stdio.close();
  live.close();
  await opened.close();
  return 0;
}
