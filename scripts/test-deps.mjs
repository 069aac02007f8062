#!/usr/bin/env node
/**
 * The Debian packages the tests drive for real: chromium (the web page, end to end), etcd-server
 * (the etcd backend), bubblewrap (the sandbox every command runs in), socat (its bridge to the egress
 * proxy) and util-linux's prlimit (its resource limits). Run by `npm test` before anything else, and as vitest's globalSetup, so a
 * machine without them stops at once with one line naming what to install, never deep inside a suite.
 * `scripts/install-test-deps` installs them.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The browser the web tests launch (test/web/harness.ts). */
const CHROMIUM = "/usr/bin/chromium";

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name, env) {
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && executable(join(dir, name)));
}

/** The Debian package names missing on this machine. */
export function missingTestPackages(env = process.env) {
  const missing = [];
  if (!executable(CHROMIUM)) missing.push("chromium");
  const etcd = env.ETCD_BIN;
  if (!(etcd ? executable(etcd) : onPath("etcd", env))) missing.push("etcd-server");
  if (!onPath("bwrap", env)) missing.push("bubblewrap");
  if (!onPath("socat", env)) missing.push("socat");
  if (!onPath("prlimit", env)) missing.push("util-linux");
  return missing;
}

/** One line naming the packages and the command that installs them; empty when nothing is missing. */
export function missingTestPackagesLine(env = process.env) {
  const missing = missingTestPackages(env);
  if (missing.length === 0) return "";
  return `the tests need Debian's ${missing.join(", ")}: run scripts/install-test-deps (as root, or with sudo), or apt-get install ${missing.join(" ")}`;
}

/** vitest's globalSetup: refuses to start the suite without them. */
export default function checkTestDeps() {
  const line = missingTestPackagesLine();
  if (line) {
    process.stderr.write(`${line}\n`);
    process.exit(1);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) checkTestDeps();
