#!/usr/bin/env node
/**
 * Runs each argument as a shell command, all at once, and fails if any fails: `npm test` runs
 * `npm run check` beside `npm run build`, since each is one busy thread (tsc; biome is quick) and CI
 * has two cores. A command's output is held and printed whole when it ends, so the two never
 * interleave.
 */
import { spawn } from "node:child_process";

const commands = process.argv.slice(2);
if (commands.length === 0) {
  console.error("usage: node scripts/run-together.mjs <command> [<command> ...]");
  process.exit(2);
}

const codes = await Promise.all(
  commands.map(
    (command) =>
      new Promise((resolve) => {
        const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "pipe"] });
        const out = [];
        child.stdout.on("data", (chunk) => out.push(chunk));
        child.stderr.on("data", (chunk) => out.push(chunk));
        child.on("error", (err) => {
          out.push(Buffer.from(`${err.message}\n`));
          resolve(1);
        });
        child.on("close", (code, signal) => {
          process.stdout.write(Buffer.concat(out));
          if (code !== 0) console.error(`run-together: \`${command}\` failed (${signal ?? `exit ${code}`})`);
          resolve(code ?? 1);
        });
      }),
  ),
);
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
