/**
 * The workspace `kvspace call` (and `kvspace policy`, which names it) works in: this shell's
 * (BYTESEEK_WORKSPACE, default the working folder) on a store folder or etcd — on a folder another
 * process holds too, where only the tree goes through the holder — and the server's through a
 * server's URL (`GET /v1/info`).
 */
import { resolve } from "node:path";
import { storeSpec } from "./open-store.js";

export async function cliWorkspace(
  env: NodeJS.ProcessEnv,
  cwd: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const spec = storeSpec(env, cwd);
  if (spec.backend !== "http") return resolve(cwd, env.BYTESEEK_WORKSPACE || ".");
  return serverWorkspace(spec.url, env, signal);
}

/** A server's workspace (`GET /v1/info`), or undefined when it does not say (an older server, no answer). */
export async function serverWorkspace(
  url: string,
  env: Readonly<Record<string, string | undefined>>,
  signal?: AbortSignal,
): Promise<string | undefined> {
  // loaded only here: the plain tree commands never need it
  const { request } = await import("undici");
  const base = url.endsWith("/") ? url : `${url}/`;
  try {
    const res = await request(new URL("v1/info", base), {
      headers: env.BYTESEEK_TOKEN ? { authorization: `Bearer ${env.BYTESEEK_TOKEN}` } : {},
      ...(signal ? { signal } : {}),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return undefined;
    const workspace = (JSON.parse(text) as { workspace?: unknown }).workspace;
    return typeof workspace === "string" ? workspace : undefined;
  } catch {
    return undefined;
  }
}
