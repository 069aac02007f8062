/**
 * What the browser tests of the agent's views start: the agent stack (test/agent/stack.ts: a
 * classic-level tree in a temp folder, a workspace, the fake model) served by a real byteseek app
 * with the web page, on an ephemeral loopback port.
 */
import { type App, type AppDeps, buildApp } from "../../server/app.js";
import { webRoutes } from "../../server/web.js";
import { type AgentStack, startAgentStack } from "../agent/stack.js";
import { silent } from "../tools/helpers.js";

export interface AgentPage extends AgentStack {
  app: App;
  url: string;
  close(): Promise<void>;
}

/** `env` adds to the model settings; `deps` adds to what the app is built with (the MCP client, the store's facts). */
export async function startAgentPage(
  prefix: string,
  options: { env?: Record<string, string>; deps?: (stack: AgentStack) => Partial<AppDeps> } = {},
): Promise<AgentPage> {
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
      await bs.close();
      await stack.tree.close();
      await stack.fake.close();
      await stack.dir.remove();
    },
  };
}
