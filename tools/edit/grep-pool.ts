import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { FileResult, SearchSpec } from "./grep-search.js";
import type { GrepReply, GrepRequest } from "./grep-worker.js";

/**
 * The compiled worker script: beside this module when running from dist/, else (running the TypeScript
 * sources, as under vitest) the one in dist/. Undefined when there is none; grep then searches in-thread.
 */
export function grepWorkerUrl(): URL | undefined {
  const beside = new URL("./grep-worker.js", import.meta.url);
  if (existsSync(beside)) return beside;
  const compiled = new URL("../../dist/tools/edit/grep-worker.js", import.meta.url);
  return existsSync(compiled) ? compiled : undefined;
}

/** One searching thread per core plus the one that walks first (and then searches too), at most 4. */
export function defaultGrepThreads(): number {
  return Math.min(4, availableParallelism() + 1);
}

/**
 * Idle grep workers kept between searches, so only the first search of a while pays for starting threads.
 * Idle workers do not keep the process alive and are stopped after `idleMs` without a search.
 */
export interface GrepPool {
  /** `n` workers for one search: idle ones first, new ones for the rest. */
  take(n: number): Worker[];
  /** Workers whose search finished with nothing in flight: kept for the next search. */
  give(workers: readonly Worker[]): void;
  /** Workers stopped mid-search (limit reached, abort, error): they may still be busy, so they are ended. */
  discard(workers: readonly Worker[]): void;
}

export function createGrepPool(workerUrl: URL, { idleMs = 30_000 }: { idleMs?: number } = {}): GrepPool {
  const idle: Worker[] = [];
  let timer: NodeJS.Timeout | undefined;
  function forget(w: Worker) {
    const i = idle.indexOf(w);
    if (i !== -1) idle.splice(i, 1);
  }
  function spawn(): Worker {
    const w = new Worker(workerUrl);
    w.on("error", () => forget(w));
    w.on("exit", () => forget(w));
    return w;
  }
  return {
    take(n) {
      clearTimeout(timer);
      const out = idle.splice(0, n);
      while (out.length < n) out.push(spawn());
      for (const w of out) w.ref();
      return out;
    },
    give(workers) {
      for (const w of workers) {
        w.unref();
        idle.push(w);
      }
      clearTimeout(timer);
      timer = setTimeout(function stopIdleWorkers() {
        for (const w of idle.splice(0)) void w.terminate();
      }, idleMs);
      timer.unref();
    },
    discard(workers) {
      for (const w of workers) void w.terminate();
    },
  };
}

export interface ParallelGrep {
  pool: GrepPool;
  threads: number;
  spec: SearchSpec;
  /** The folder to walk (a real path) and the workspace root whose `.gitignore` files apply. */
  start: string;
  /** Search exactly these files instead of walking `start` (one file named by the call). */
  files?: string[];
  root: string;
  /** Which walked files to search (the glob filter). */
  keep: (file: string) => boolean;
  /** The path shown in the output for a file. */
  shown: (file: string) => string;
  signal: AbortSignal;
  /** Called with each file's result in walk order; answering false stops the search. */
  consume: (result: FileResult | null) => boolean;
}

const FILES_PER_BATCH = 128;
/** Batches in flight per worker, so none waits on the main thread between two. */
const SLOTS = 2;

/**
 * Walks and searches with worker threads: the first worker walks and streams the files it finds, the others
 * search batches of them as they come (the walker joins them once done); results are consumed in walk order,
 * so the output is what a search in one thread gives. Answers how many paths `.gitignore` left out.
 */
export function grepInWorkers(o: ParallelGrep): Promise<{ ignored: number }> {
  return new Promise((resolve, reject) => {
    const workers = o.pool.take(o.threads);
    const free: Worker[] = [];
    const batches: { files: string[]; shown: string[] }[] = [];
    const ready = new Map<number, (FileResult | null)[]>();
    let pending: string[] = [];
    let sent = 0;
    let consumed = 0;
    let walked = false;
    let ignored = 0;
    let done = false;
    const listeners = workers.map((w) => ({
      message: (m: GrepReply) => onReply(w, m),
      error: (err: Error) => finish(err),
      exit: (code: number) => finish(new Error(`a grep worker stopped early (exit code ${code})`)),
    }));
    function finish(err?: unknown, complete = false) {
      if (done) return;
      done = true;
      o.signal.removeEventListener("abort", onAbort);
      workers.forEach((w, i) => {
        const l = listeners[i]!;
        w.off("message", l.message).off("error", l.error).off("exit", l.exit);
      });
      // only a search that ran to the end leaves its workers idle
      if (complete) o.pool.give(workers);
      else o.pool.discard(workers);
      if (err === undefined) resolve({ ignored });
      else reject(err);
    }
    function onAbort() {
      finish(o.signal.reason);
    }
    const send = (w: Worker, req: GrepRequest) => w.postMessage(req);
    function cutBatches(all: boolean) {
      while (pending.length >= FILES_PER_BATCH || (all && pending.length > 0)) {
        const files = pending.slice(0, FILES_PER_BATCH);
        pending = pending.slice(FILES_PER_BATCH);
        batches.push({ files, shown: files.map(o.shown) });
      }
    }
    function pump() {
      while (free.length > 0 && sent < batches.length) {
        const batch = batches[sent]!;
        send(free.pop()!, { kind: "search", id: sent, ...batch });
        sent++;
      }
    }
    function drain() {
      for (let results = ready.get(consumed); results; results = ready.get(consumed)) {
        ready.delete(consumed);
        batches[consumed] = { files: [], shown: [] }; // done with it
        consumed++;
        for (const r of results) if (!o.consume(r)) return finish();
      }
      if (walked && consumed === batches.length) finish(undefined, true);
    }
    function onReply(w: Worker, m: GrepReply) {
      if (done) return;
      if (m.kind === "files") {
        for (const f of m.files) if (o.keep(f)) pending.push(f);
        cutBatches(false);
      } else if (m.kind === "walked") {
        walked = true;
        ignored = m.ignored;
        cutBatches(true);
        for (let s = 0; s < SLOTS; s++) free.push(w);
      } else {
        ready.set(m.id, m.results);
        free.push(w);
      }
      pump();
      if (m.kind !== "files") drain();
    }
    if (o.signal.aborted) return finish(o.signal.reason);
    o.signal.addEventListener("abort", onAbort);
    workers.forEach((w, i) => {
      const l = listeners[i]!;
      w.on("message", l.message).on("error", l.error).on("exit", l.exit);
      send(w, { kind: "job", spec: o.spec });
      if (i === 0 && !o.files) send(w, { kind: "walk", start: o.start, root: o.root });
      else for (let s = 0; s < SLOTS; s++) free.push(w);
    });
    if (o.files) {
      // nothing to walk: the files are the batches
      walked = true;
      pending = o.files.filter(o.keep);
      cutBatches(true);
      pump();
      drain();
    }
  });
}
