/**
 * A grep worker thread, kept in a pool between searches. Each search starts with a job (the pattern); the
 * worker may then first be asked to walk a folder (synchronous readdir, no round trips through
 * the libuv pool), posting the files in walk order as it finds them; then, like every worker, it searches the
 * batches of files it is sent with synchronous reads — blocking here keeps the main thread free.
 */
import { parentPort } from "node:worker_threads";
import { createFileSearcher, type FileResult, type SearchSpec } from "./grep-search.js";
import { walkFilesSync } from "./walker.js";

/** Messages to a worker. */
export type GrepRequest =
  | { kind: "job"; spec: SearchSpec }
  | { kind: "walk"; start: string; root: string }
  | { kind: "search"; id: number; files: string[]; shown: string[] };

/** Messages from a worker. */
export type GrepReply =
  | { kind: "files"; files: string[] }
  | { kind: "walked"; ignored: number }
  | { kind: "results"; id: number; results: (FileResult | null)[] };

const FILES_PER_MESSAGE = 256;

const port = parentPort;
if (port) {
  let searcher: ReturnType<typeof createFileSearcher> | undefined;
  const reply = (m: GrepReply) => port.postMessage(m);
  port.on("message", function onRequest(req: GrepRequest) {
    if (req.kind === "job") {
      searcher = createFileSearcher(req.spec);
      return;
    }
    if (req.kind === "walk") {
      let files: string[] = [];
      const ignored = walkFilesSync(req.start, { root: req.root }, (f) => {
        files.push(f);
        if (files.length === FILES_PER_MESSAGE) {
          reply({ kind: "files", files });
          files = [];
        }
      });
      if (files.length > 0) reply({ kind: "files", files });
      reply({ kind: "walked", ignored });
      return;
    }
    const s = searcher;
    if (!s) throw new Error("grep worker: a search came before its job");
    const results = req.files.map((f, i) => s.searchFileSync(f, req.shown[i]!) ?? null);
    reply({ kind: "results", id: req.id, results });
  });
}
