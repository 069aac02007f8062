/**
 * What the browser tests of the agent's views start: the agent stack (test/agent/stack.ts: a
 * classic-level tree in a temp folder, a workspace, the fake model) served by a real byteseek app
 * with the web page, on an ephemeral loopback port.
 */
import { afterAll, beforeAll } from "vitest";
import { type App, type AppDeps, buildApp } from "../../server/app.js";
import { webRoutes } from "../../server/web.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "../agent/stack.js";
import { silent } from "../tools/helpers.js";

export interface AgentPage extends AgentStack {
  app: App;
  url: string;
  close(): Promise<void>;
}

export interface AgentPageOptions {
  env?: Record<string, string>;
  deps?: (stack: AgentStack) => Partial<AppDeps>;
}

/** `env` adds to the model settings; `deps` adds to what the app is built with (the MCP client, the store's facts). */
export async function startAgentPage(prefix: string, options: AgentPageOptions = {}): Promise<AgentPage> {
  const stack = await startAgentStack(prefix, options.env);
  const { bs } = stack;
  const app = await buildApp({
    tree: bs.tree,
    logger: silent,
    runtime: bs.runtime,
    agent: bs.agent,
    models: bs.models,
    ...options.deps?.(stack),
  });
  if (!app.hasRoute({ method: "GET", url: "/" })) await app.register(webRoutes);
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    ...stack,
    app,
    url,
    async close() {
      await app.close();
      await stopAgentStack(stack);
    },
  };
}

/**
 * One agent page for a test file: started before its tests (then `setup` runs on it: what a person
 * did before the page opened), closed after them. What it answers reads the started page's fields,
 * so the tests name `agent.tree`, `agent.url`… (reading one before the file's tests start throws).
 */
export function useAgentPage(
  prefix: string,
  options: AgentPageOptions & { setup?: (page: AgentPage) => Promise<void> } = {},
): AgentPage {
  let started: AgentPage | undefined;
  beforeAll(async () => {
    started = await startAgentPage(prefix, options);
    await options.setup?.(started);
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as AgentPage, {
    get(_, field) {
      if (!started) throw new Error("the agent page starts in beforeAll: read it from the tests");
      return Reflect.get(started, field);
    },
  });
}
