import { lookup } from "node:dns/promises";
import type { HostLookup } from "./host-rules.js";

/** How long a name may take to resolve before the request is refused as unresolved. */
const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The server's resolver (getaddrinfo: /etc/hosts, then DNS), every address of a name in the order
 * the system gives them. Names are resolved here, outside any sandbox, so the answer that was
 * checked is the one connected to.
 */
export const systemLookup: HostLookup = async function systemLookup(host) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer in ${LOOKUP_TIMEOUT_MS / 1000} s`)),
      LOOKUP_TIMEOUT_MS,
    );
    timer.unref();
  });
  try {
    return await Promise.race([lookup(host, { all: true, verbatim: true }), late]);
  } finally {
    clearTimeout(timer);
  }
};
