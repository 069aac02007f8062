export { isOwnAddress, ownAddresses, specialRange } from "./address.js";
export {
  type HostLookup,
  matchName,
  type NameVerdict,
  type NetEntry,
  type NetTarget,
  normaliseHost,
  parseEntry,
  type Resolved,
  type ResolveOptions,
  reservedHost,
  resolveTarget,
  targetOfAuthority,
  targetOfUrl,
} from "./host-rules.js";
export { systemLookup } from "./lookup.js";
export { pinnedAgent } from "./pinned-agent.js";
export { EGRESS_SOCKET, type EgressProxy, type EgressProxyOptions, startEgressProxy } from "./proxy.js";
