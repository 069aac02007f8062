/**
 * The connection of a Streamable HTTP upstream, held to the `net` rules as `http` tools are: the
 * URL's host is resolved here, checked — against the grant of the entry's owner when a run wrote it
 * (a wildcard never reaches loopback, private or this server's addresses), taken as named when a
 * person did — and every request of the connection goes to the address that was checked. The name
 * is never looked up again, so a second DNS answer cannot move the connection (DNS rebinding).
 */
import type { FetchLike } from "@modelcontextprotocol/client";
import { fetch as undiciFetch } from "undici";
import type { Tree } from "../../tree/types.js";
import { ToolError } from "../errors.js";
import { netHosts, type Policy } from "../gate/policy.js";
import { grantOf } from "../gate/powers.js";
import { type HostLookup, resolveTarget, targetOfUrl } from "../net/host-rules.js";
import { systemLookup } from "../net/lookup.js";
import { pinnedAgent } from "../net/pinned-agent.js";
import { entryRevision } from "./oauth/entry.js";
import { type HttpEntry, MCP_DIR } from "./registry.js";

/** A Streamable HTTP server to connect to: its entry and the entry's revision. */
export interface ConnectRequest {
  server: string;
  entry: HttpEntry;
  entryRev: number;
}

/** The fetch every request of one connection goes through, and how to end it. */
export interface PinnedConnection {
  fetch: FetchLike;
  /** The address the name was checked at (and every request goes to). */
  address: string;
  close(): Promise<void>;
}

/** Throws a ToolError (`mcp_unavailable`) when the upstream may not be reached. */
export type UpstreamConnector = (request: ConnectRequest) => Promise<PinnedConnection>;

export interface UpstreamHttpOptions {
  tree: Tree;
  /** The policy now (undefined when it is invalid: then a run's entry is not reached). */
  readPolicy(): Promise<Policy | undefined>;
  lookup?: HostLookup;
}

export function pinnedConnector(options: UpstreamHttpOptions): UpstreamConnector {
  const lookup = options.lookup ?? systemLookup;
  return async function connectPinned({ server, entry, entryRev }) {
    const url = new URL(entry.url);
    const target = targetOfUrl(url);
    const node = await options.tree.get(`${MCP_DIR}${server}`);
    if (!node || node.kind === "index" || entryRevision(node) !== entryRev)
      throw new ToolError(
        "mcp_unavailable",
        `the entry of the MCP server "${server}" changed while it was reached; call it again`,
        { details: { server } },
      );
    let entries: string[];
    let rule = "";
    if (node.vid === undefined) {
      // a person named this host: reach it as named (loopback and private included)
      entries = [url.host.startsWith("[") ? url.host : `${target.host}:${target.port}`];
    } else {
      const policy = await options.readPolicy();
      if (!policy)
        throw new ToolError(
          "mcp_unavailable",
          `the policy at /byteseek/policy is invalid, so the MCP server "${server}" that run ${node.vid} registered is not reached`,
          { details: { server } },
        );
      const granted = grantOf(policy.grants, node.vid);
      entries = netHosts(policy, granted.grant);
      rule = granted.rule;
    }
    const resolved = await resolveTarget(target, entries, { lookup });
    if (!resolved.ok)
      throw new ToolError(
        "mcp_unavailable",
        node.vid === undefined
          ? `the MCP server "${server}" (${entry.url}) is not reached: ${resolved.reason}`
          : `the MCP server "${server}" (${entry.url}) is not reached: run ${node.vid} registered it, and ${resolved.reason} (rule: ${rule}.net). A person may register it instead`,
        { details: { server, code: resolved.code } },
      );
    const agent = await pinnedAgent(resolved.address, resolved.family, { connections: 4 });
    const pinnedFetch: FetchLike = async (input, init) => {
      const to = new URL(input);
      // only the checked origin goes through the pinned address (a redirect elsewhere does not);
      // a person's server may sign in at an authorization server elsewhere, reached as named (the
      // SDK's OAuth requests: metadata, registration, token)
      if (
        (to.host !== url.host || to.protocol !== url.protocol) &&
        node.vid === undefined &&
        isOAuthRequest(init)
      )
        return asGlobalResponse(
          await undiciFetch(to, { ...(init as Parameters<typeof undiciFetch>[1]), redirect: "manual" }),
        );
      if (to.host !== url.host || to.protocol !== url.protocol)
        throw new Error(
          `byteseek reaches the MCP server "${server}" only at ${url.origin}, not ${to.origin}`,
        );
      const answer = await undiciFetch(to, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher: agent,
        redirect: "manual",
      });
      return asGlobalResponse(answer);
    };
    return {
      fetch: pinnedFetch,
      address: resolved.address,
      close: () => agent.close(),
    };
  };
}

/**
 * Whether a request of the connection is one of the SDK's OAuth requests rather than MCP: they never
 * carry the MCP protocol headers the transport puts on its own.
 */
function isOAuthRequest(init: RequestInit | undefined): boolean {
  const headers = new Headers(init?.headers);
  return !headers.has("mcp-protocol-version") && !headers.has("mcp-session-id");
}

/**
 * undici's Response as the global one: the same WHATWG shape, but another class, and the SDK tells
 * an OAuth error response by `instanceof Response` (an invalid_grant read as "[object Response]"
 * would never end a revoked sign-in).
 */
function asGlobalResponse(answer: Awaited<ReturnType<typeof undiciFetch>>): Response {
  const body = answer.body as ReadableStream<Uint8Array> | null;
  return new Response(answer.status === 204 || answer.status === 304 ? null : body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: answer.headers as unknown as Headers,
  });
}
