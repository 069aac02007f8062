/**
 * The golden table (golden-cases.ts) in both modes — the embedded store and a byteseek server
 * (KVSPACE=http://…) — in-process through `runKvspace`, and the end-to-end contract as real
 * `node dist/cli/kvspace.js` processes.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseHistoryLimit } from "../../tree/index.js";
import { type CliServer, cliEnv, startCliServer, tempDirs } from "./cli-server.js";
import { CONTRACT, GOLDEN_SCRIPTS, type GoldenCase } from "./golden-cases.js";
import { runInProcess } from "./in-process.js";
import type { CliResult } from "./run-cli.js";
import { assertBuilt, runCli } from "./run-cli.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const temps = tempDirs("kvspace-golden-");

/**
 * `{store}` in an expected output stands for where the store is (a folder, or the server's URL),
 * `{workspace}` for the workspace the file tools work in.
 */
function expectCase(result: CliResult, c: GoldenCase, store: string, workspace: string): void {
  const fill = (text: string) => text.replaceAll("{store}", store).replaceAll("{workspace}", workspace);
  expect({ stdout: result.stdout, stderr: result.stderr, code: result.code }).toEqual({
    stdout: fill(c.stdout),
    stderr: fill(c.stderr ?? ""),
    code: c.code ?? 0,
  });
}

function runOptions(c: GoldenCase, env: NodeJS.ProcessEnv) {
  return {
    env: { ...env, ...c.env },
    cwd: REPO,
    ...(c.stdin === undefined ? {} : { stdin: c.stdin }),
    ...(c.interruptAfterLines === undefined ? {} : { interruptAfterLines: c.interruptAfterLines }),
  };
}

afterAll(() => temps.removeAll());

/** The golden scripts read back history under /app/, which keeps none by default: both modes keep 10. */
const HISTORY = "/app/=10";

for (const mode of ["embedded", "http"] as const) {
  for (const script of GOLDEN_SCRIPTS) {
    describe(`kvspace golden (${mode}): ${script.name}`, () => {
      let store = "";
      let workspace = "";
      let server: CliServer | undefined;
      beforeAll(async () => {
        store = join(await temps.make(), "store");
        workspace = await temps.make();
        if (mode === "http")
          server = await startCliServer({
            store,
            workspace,
            seed: script.seeded === true,
            historyLimit: parseHistoryLimit(HISTORY),
          });
      });
      afterAll(async () => {
        await server?.close();
      });

      for (const c of script.cases) {
        // Embedded, an independent case gets a store of its own; through a server, they share its store.
        const test = script.independent ? it.concurrent : it;
        test(`${c.name}: kvspace ${c.args.join(" ")}`, async () => {
          const where = server?.url ?? (script.independent ? join(await temps.make(), "store") : store);
          expectCase(
            await runInProcess(
              c.args,
              runOptions(
                c,
                cliEnv(where, {
                  BYTESEEK_WORKSPACE: workspace,
                  BYTESEEK_HISTORY: HISTORY,
                  ...(script.seeded ? {} : { BYTESEEK_SEED: "0" }),
                }),
              ),
            ),
            c,
            where,
            workspace,
          );
        });
      }
    });
  }
}

describe("kvspace contract (child processes)", () => {
  let store = "";
  let workspace = "";
  beforeAll(async () => {
    assertBuilt();
    store = join(await temps.make(), "store");
    workspace = await temps.make();
  });

  for (const c of CONTRACT) {
    it(`${c.name}: kvspace ${c.args.join(" ")}`, async () => {
      const result = await runCli(
        c.args,
        runOptions(c, cliEnv(store, { BYTESEEK_WORKSPACE: workspace, BYTESEEK_SEED: "0" })),
      );
      expectCase(result, c, store, workspace);
    });
  }
});
