/**
 * The sandbox a stdio MCP server starts in (upstream.ts asks here for its command line): the
 * filesystem of the grant its entry's owner holds — grants.default for a person's entry, that run's
 * own grant for an entry a run wrote — plus the folders a person listed in the entry's
 * `readOnlyPaths`; no network unless that grant's `net` (or a person's `net` on the entry) names
 * hosts, and then only those, through an egress proxy of the server's own. Fails closed as commands
 * do: where the sandbox cannot be made, the server is not started.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Logger } from "pino";
import type { Tree } from "../../tree/types.js";
import { ToolError } from "../errors.js";
import { netHosts, policyPaths } from "../gate/gate.js";
import type { Policy } from "../gate/policy.js";
import { grantOf } from "../gate/powers.js";
import type { HostLookup } from "../net/host-rules.js";
import { type EgressProxy, startEgressProxy } from "../net/proxy.js";
import { expandHome, grantView } from "../sandbox/grant-view.js";
import type { SandboxRunner } from "../sandbox/runner.js";
import { MCP_DIR } from "./registry.js";
import { type LaunchRequest, type UpstreamLauncher, unsandboxedLaunch } from "./upstream.js";

export interface UpstreamSandboxOptions {
  tree: Tree;
  runner: SandboxRunner;
  /** The policy now (undefined when it is invalid: then nothing starts). */
  readPolicy(): Promise<Policy | undefined>;
  workspace: string;
  /** The server's folders (the store): hidden even inside a root or a readOnlyPath. */
  hidden: readonly string[];
  /** The server's HOME, for `~/` in credential paths and readOnlyPaths. */
  home: string | undefined;
  logger: Logger;
  /** The resolver of the egress proxy (default: the system's). */
  lookup?: HostLookup;
}

export function sandboxedLauncher(options: UpstreamSandboxOptions): UpstreamLauncher {
  const { tree, logger } = options;
  let workspace: Promise<string> | undefined;

  /** The real paths of a person's readOnlyPaths that exist (a missing one is logged and left out). */
  async function readOnly(request: LaunchRequest): Promise<string[]> {
    const out: string[] = [];
    for (const p of request.entry.readOnlyPaths ?? []) {
      const expanded = expandHome(p, options.home);
      const real = expanded === undefined ? undefined : await realpath(expanded).catch(() => undefined);
      if (real === undefined)
        logger.warn({ server: request.server, path: p }, "a readOnlyPaths folder does not exist: not shown");
      else out.push(real);
    }
    return out;
  }

  return async function launchSandboxed(request) {
    const { server } = request;
    const policy = await options.readPolicy();
    if (!policy)
      throw new ToolError(
        "mcp_unavailable",
        `the policy at /byteseek/policy is invalid, so the MCP server "${server}" is not started (its sandbox is made from the policy); a person must fix the policy`,
        { details: { server } },
      );
    if (policy.sandbox === "off") return unsandboxedLaunch(request);
    // the owner decides the grant: read the entry the start is for, not a later one
    const node = await tree.get(`${MCP_DIR}${server}`);
    if (!node || node.kind === "index" || node.modRev !== request.entryRev)
      throw new ToolError(
        "mcp_unavailable",
        `the entry of the MCP server "${server}" changed while it started; call it again`,
        { details: { server } },
      );
    const person = node.vid === undefined;
    const { grant, rule } = person
      ? { grant: policy.grants.default, rule: "grants.default" }
      : grantOf(policy.grants, node.vid as string);
    workspace ??= realpath(options.workspace).catch(() => path.resolve(options.workspace));
    const ws = await workspace;
    const paths = await policyPaths(policy, ws);
    const view = grantView({
      grant,
      roots: [ws, ...paths.roots],
      deny: paths.deny,
      credentialPaths: policy.credentialPaths,
      serverPaths: options.hidden,
      home: options.home,
    });
    const ownHosts = person ? (request.entry.net ?? []) : [];
    const hosts = [...netHosts(policy, grant), ...ownHosts];
    let proxy: EgressProxy | undefined;
    let dir: string | undefined;
    const closeProxy = async () => {
      await proxy?.close().catch(() => {});
      if (dir) await rm(dir, { recursive: true, force: true });
    };
    try {
      if (hosts.length > 0) {
        dir = await mkdtemp(path.join(tmpdir(), "byteseek-mcp-egress-"));
        proxy = await startEgressProxy({
          dir,
          hosts,
          grantRule: ownHosts.length ? `${rule}.net and ${MCP_DIR}${server} net` : `${rule}.net`,
          logger: logger.child({ part: "egress", server }),
          ...(options.lookup ? { lookup: options.lookup } : {}),
        });
      }
      const prepared = await options.runner.prepare({
        view: { ...view, extraReadOnly: person ? await readOnly(request) : [] },
        limits: policy.limits,
        network: proxy ? { mode: "proxy", socketPath: proxy.socketPath } : { mode: "none" },
        command: request.command,
        env: request.env,
        cwd: request.cwd,
        name: request.mark,
      });
      return {
        command: prepared.file,
        args: prepared.args,
        env: prepared.env,
        cwd: prepared.cwd,
        async release() {
          await prepared.release();
          await closeProxy();
        },
        outOfMemory: prepared.outOfMemory,
      };
    } catch (err) {
      await closeProxy();
      throw err;
    }
  };
}
