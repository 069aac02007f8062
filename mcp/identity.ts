/**
 * What hosts are told the server is: answered to `initialize` and stamped on each 2026-era result,
 * by the SDK's instances (server.ts) and by the fast lane's answers (fast-call.ts) alike. Its own
 * module so neither of those two imports the other both ways.
 */
export interface ServerIdentity {
  name: string;
  version: string;
}
