/**
 * `npm run bench`: runs every bench script in turn, each in its own process so one's memory and
 * open stores do not weigh on the next. Pass names to run some: `npm run bench -- tree tools`;
 * `--quick` is handed on for a short run.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ALL = [
  "tree",
  "tools",
  "edit",
  "prompt",
  "http",
  "etcd",
  "mcp",
  "mcp-client",
  "tool-search",
  "sandbox",
  "durable",
  "resume",
  "replay",
  "lanes",
  "cli",
  "run-start",
  "move",
  "failing",
  "web",
];
const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith("--"));
const names = args.filter((a) => !a.startsWith("--"));
let failed = 0;
for (const name of names.length > 0 ? names : ALL) {
  const script = join(here, `${name}.js`);
  if (!existsSync(script)) {
    console.log(`\n## ${name}: no such bench (${script})`);
    continue;
  }
  console.log(`\n## ${name}`);
  const res = spawnSync(process.execPath, ["--expose-gc", script, ...flags], { stdio: "inherit" });
  if (res.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
