/** What the tests of store-folder sharing (share.test.ts, relay.test.ts) ask of a folder and its socket. */
import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { openTree, type Tree } from "../../tree/index.js";

/** The record of a relayed session's call: under the session's run the holder named, mcp-<client>-<n> (mcp/session-run.ts). */
export const RELAYED_RECORD = /^\/byteseek\/tool\/mcp-[A-Za-z0-9_.:@-]+-[0-9]+\/[0-9]+$/;

/** The token a holder made in the store folder (server/token-file.ts). */
export async function storeToken(store: string): Promise<string> {
  return (await readFile(join(store, "token"), "utf8")).trim();
}

/** What a raw connection to the socket answers to `line`, once it closes (or, with `first`, its first line). */
export function exchange(path: string, line: string): Promise<{ answer: string; closed: boolean }>;
export function exchange(path: string, line: string, first: true): Promise<string>;
export function exchange(path: string, line: string, first?: true): Promise<unknown> {
  return new Promise((done, fail) => {
    const s = connect(path);
    let seen = "";
    s.on("error", fail);
    s.on("data", (d: Buffer) => {
      seen += d.toString();
      if (first && seen.includes("\n")) {
        s.destroy();
        done(seen);
      }
    });
    s.on("close", () => done(first ? seen : { answer: seen, closed: true }));
    s.write(line);
  });
}

/** The tool the call record at `key` names, read from the store folder once nobody holds it. */
export async function recordName(folder: string, key: string): Promise<string | undefined> {
  const tree = await openTree({ backend: "classic", location: folder });
  try {
    return await recordNameIn(tree, key);
  } finally {
    await tree.close();
  }
}

/** The tool a call record names. */
export async function recordNameIn(tree: Tree, key: string): Promise<string | undefined> {
  const rec = await tree.get(key);
  return rec?.kind === "json" ? (rec.value.value as { name: string }).name : undefined;
}
