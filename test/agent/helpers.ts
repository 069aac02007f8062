/** What the agent tests share: the built byteseek CLI as a child process, and a failure's AgentError. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type AgentError, isAgentError } from "../../agent/errors.js";

export const BYTESEEK_BIN = fileURLToPath(new URL("../../dist/cli/byteseek.js", import.meta.url));

/** Fails with what to do when the CLI has not been built. */
export function needBuiltCli(): void {
  if (!existsSync(BYTESEEK_BIN)) throw new Error(`${BYTESEEK_BIN} is missing: run \`npm run build\` first`);
}

/**
 * Runs the built byteseek CLI with exactly `env`; with `stdin`, that is written then closed (else
 * stdin is ignored); `nodeArgs` go to node before the script (`--import` a hook).
 */
export function byteseek(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin?: string,
  { nodeArgs = [] }: { nodeArgs?: string[] } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs, BYTESEEK_BIN, ...args], {
    env,
    stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  if (stdin !== undefined) child.stdin?.end(stdin);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The AgentError `promise` fails with; anything else (or no failure) fails the test. */
export async function agentFailure(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (err) {
    if (isAgentError(err)) return err;
    throw err;
  }
  throw new Error("expected the call to fail with an AgentError");
}
