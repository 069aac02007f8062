/**
 * The tree's bulk routes as the page uses them: transactions (at most 128 operations each),
 * move and copy of a key or a directory in one revision, grep of keys and values, and the NDJSON
 * export and import. Kept beside api.ts so the views of other sections do not share its hunks.
 */
import { type Api, type JsonValue, toError, type ValueNode } from "./api.js";
import { encodeKeyPath } from "./keys.js";

/** The most operations one POST /v1/txn takes (tree/txn.ts MAX_TXN_OPS). */
export const TXN_MAX_OPS = 128;

export type TxnOp =
  | { op: "del"; key: string }
  | { op: "deltree"; key: string }
  | { op: "mkindex"; key: string }
  | { op: "get"; key: string }
  | { op: "move" | "copy"; key: string; to: string; overwrite?: boolean; force?: boolean };

export interface TxnAnswer {
  succeeded: boolean;
  rev: number;
  results: Array<(Partial<ValueNode> & { removed?: number; keys?: number }) | null>;
}

export interface MoveAnswer {
  revision: number;
  keys: number;
}

export interface GrepMatch {
  key: string;
  line?: number;
  preview: string;
}

export interface GrepAnswer {
  matches: GrepMatch[];
  next?: string;
  /** A budget of the server (bytes read, time), not the limit, stopped this page. */
  truncated?: boolean;
  scanned?: { keys: number; bytes: number };
}

export interface GrepQuery {
  pattern: string;
  keys: boolean;
  values: boolean;
  limit: number;
  after?: string;
}

export function createTreeOps(api: Api) {
  const call = api.json;
  const post = <T>(path: string, body: unknown) =>
    call<T>(path, { method: "POST", body: JSON.stringify(body) });

  return {
    txn: (success: TxnOp[]) => post<TxnAnswer>("/v1/txn", { success }),
    /**
     * Moves (or copies) a key or a directory in one revision; 409 TREE_EXISTS when `to` exists and
     * not `overwrite`, 403 TREE_READ_ONLY for read-only keys without `force`.
     */
    transfer: (
      kind: "move" | "copy",
      from: string,
      to: string,
      opts: { overwrite?: boolean; force?: boolean } = {},
    ) =>
      post<MoveAnswer>(`/v1/${kind}`, {
        from,
        to,
        ...(opts.overwrite ? { overwrite: true } : {}),
        ...(opts.force ? { force: true } : {}),
      }),
    grep(prefix: string, q: GrepQuery) {
      const qs = new URLSearchParams({
        pattern: q.pattern,
        regex: "0",
        ignoreCase: "1",
        keys: q.keys ? "1" : "0",
        values: q.values ? "1" : "0",
        limit: String(q.limit),
      });
      if (q.after !== undefined) qs.set("after", q.after);
      return call<GrepAnswer>(`/v1/grep/${encodeKeyPath(prefix)}?${qs}`);
    },
    /** The NDJSON export of `dir` (secrets masked, as the server sends them). */
    async exportText(dir: string): Promise<string> {
      const res = await api.request(`/v1/export/${encodeKeyPath(dir)}`);
      const text = await res.text();
      if (!res.ok) {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {}
        throw toError(res.status, body);
      }
      return text;
    },
    importText: (ndjson: string, force = false) =>
      call<{ imported: number; rev: number }>(`/v1/import${force ? "?force=1" : ""}`, {
        method: "POST",
        headers: { "content-type": "application/x-ndjson" },
        body: ndjson,
      }),
    /** Reads `keys` in transactions of 128 gets; a missing key reads as null. */
    async getMany(keys: string[]): Promise<Map<string, (Partial<ValueNode> & { value?: JsonValue }) | null>> {
      const out = new Map<string, (Partial<ValueNode> & { value?: JsonValue }) | null>();
      for (let i = 0; i < keys.length; i += TXN_MAX_OPS) {
        const chunk = keys.slice(i, i + TXN_MAX_OPS);
        const r = await post<TxnAnswer>("/v1/txn", { success: chunk.map((key) => ({ op: "get", key })) });
        for (const [j, k] of chunk.entries()) out.set(k, r.results[j] ?? null);
      }
      return out;
    },
  };
}

export type TreeOps = ReturnType<typeof createTreeOps>;
