/**
 * Reads served locally: a cache of the nodes this server read, kept current by one etcd watch of
 * the tree's node keys (the feed), applied in revision order.
 *
 * The rule that keeps it correct is one comparison: a read is answered from the cache only while
 * the feed has applied every revision this server knows of (`fedRev >= known()`, where `known` is
 * the highest revision any answer from etcd carried, this server's own writes included). Then the
 * cache holds exactly the store as of that revision, so a local answer is as fresh as a quorum
 * read made at that revision; a server's own write raises `known` at once, so its next read goes
 * to etcd until the feed has applied it (read-your-writes); another server's write reaches this
 * one's reads within one watch delay. A read that misses goes to etcd (a linearizable range) and
 * is kept only if the feed had not yet passed the revision it was read at (the feed then applies
 * every later change to it). While the feed is down nothing is answered locally and the cache is
 * dropped; it starts again empty from the revision its new stream is created at.
 *
 * The feed reaches a revision through the events it applies; when this server knows of revisions
 * that bring no event of its range (other prefixes' writes), it asks etcd for a progress answer,
 * but only from an etcd that sends that answer behind the events it covers (client.ts,
 * progressFollowsEvents). From an older one, local answers wait for the next change in the tree.
 *
 * The same stream feeds every watch() of the tree (watch.ts): each response is decoded once and
 * its revisions handed to the subscribers, so a server holds one etcd watcher, however many
 * prefixes it watches. With no cache and no subscriber the stream is not kept.
 */

import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import { keyFromNodeKey, NODE } from "../encoding.js";
import { deepFreeze } from "../node-cache.js";
import { SizedCache } from "../sized-cache.js";
import type { TreeNode } from "../types.js";
import type { EtcdCalls } from "./calls.js";
import { ordersProgress } from "./client.js";
import { byRevision, type FeedRevision, revisionOf } from "./events.js";
import { type EtcdRecord, nodeOf } from "./layout.js";
import type { WatchRequest, WatchResponse } from "./wire.js";

export interface LocalReadsOptions {
  /** For etcd's version (whether its progress answers can be trusted). */
  client: Etcd3;
  rpc: EtcdCalls;
  prefix: string;
  /** Memory for cached nodes, bytes (0: every read goes to etcd). */
  cacheBytes: number;
  /** The highest revision this server has seen (its writes and etcd's answers). */
  known(): number;
  logger?: Logger;
}

/** A node record as stored in etcd, with its key's revisions. */
export interface CachedRecord {
  raw: string;
  cr: number;
  mr: number;
}

/** A watcher fed by the stream (watch.ts). */
export interface FeedSubscriber {
  /** Its events are those under this prefix: other keys' records need not be decoded for it. */
  prefix: string;
  /**
   * The stream is live from `rev` (its first connection, or again after a loss): every revision
   * after `rev` follows through `revision`, none before it.
   */
  live(rev: number): void;
  /** A revision of the tree, in order. */
  revision(r: FeedRevision): void;
}

export interface LocalReads {
  /**
   * The record of node `sk` as this server last read or wrote it, for the write path (whose
   * commit compares it, so it may be out of date): kept with nodes, fed by the same watch.
   */
  record(sk: string): CachedRecord | undefined;
  /** Records read from etcd or written by a commit; never replaces a newer one. */
  noteRecord(sk: string, rec: CachedRecord): void;
  /** Forgets records (a commit's compares found them out of date; a range was deleted: all). */
  dropRecords(sks?: Iterable<string>): void;
  /** The cached node, when the cache may answer now; undefined: ask etcd. */
  get(key: string): TreeNode | undefined;
  /** A node read from etcd at `rev` (raw record length for the cache's budget). */
  remember(key: string, node: TreeNode, rev: number, rawLength: number): TreeNode;
  /** The revision the feed has applied everything up to (0 while it is down). */
  fedRev(): number;
  /** Feeds `sub` from the stream until the answer is called. */
  subscribe(sub: FeedSubscriber): () => void;
  close(): void;
}

/**
 * A cached node, or the record it is built from when a read first wants it: a write's event is
 * kept as it arrives, not parsed for a read that may never come.
 */
interface Slot {
  node?: TreeNode;
  rec?: CachedRecord;
}

export function startLocalReads(o: LocalReadsOptions): LocalReads {
  let cache = new SizedCache<Slot>(o.cacheBytes);
  let records = new SizedCache<CachedRecord>(o.cacheBytes);
  const noteRecord = (sk: string, rec: CachedRecord) => {
    const had = records.get(sk);
    if (!had || had.mr < rec.mr) records.set(sk, rec, rec.raw.length);
  };
  let fed = 0;
  let live = false;
  let stopped = false;
  let generation = 0;
  let backoff = 100;
  let cancel: (() => void) | undefined;
  let askedProgress = false;
  /** Whether this etcd's progress answers may move `fed` (see progressFollowsEvents). */
  let progressTrusted = false;
  let write: ((req: WatchRequest) => void) | undefined;
  const subs = new Set<FeedSubscriber>();
  let running = o.cacheBytes > 0;
  const wanted = (key: string) => {
    for (const sub of subs) if (key.startsWith(sub.prefix)) return true;
    return false;
  };
  const from = Buffer.from(o.prefix + NODE, "utf8");
  const to = Buffer.from(o.prefix + String.fromCharCode(NODE.charCodeAt(0) + 1), "utf8");

  const down = (gen: number, why: unknown) => {
    if (stopped || gen !== generation) return;
    generation++;
    live = false;
    fed = 0;
    write = undefined;
    cache = new SizedCache<Slot>(o.cacheBytes);
    records = new SizedCache<CachedRecord>(o.cacheBytes);
    cancel?.();
    cancel = undefined;
    o.logger?.warn({ err: why }, "etcd feed of the node cache lost; reads go to etcd until it is back");
    setTimeout(() => void connect(), backoff);
    backoff = Math.min(backoff * 2, 2000);
  };

  const apply = (res: WatchResponse) => {
    for (const ev of res.events) {
      const sk = ev.kv.key.toString("utf8").slice(o.prefix.length);
      const key = keyFromNodeKey(sk);
      const rev = ev.kv.mod_revision;
      if (ev.type === "Delete") {
        cache.delete(key);
        const had = records.get(sk);
        if (had && had.mr < rev) records.delete(sk);
        continue;
      }
      // Kept current only for what this server read or wrote: a stream of new keys would only fill
      // the caches. A record this server's own commit already noted is not decoded again.
      const had = records.get(sk);
      const newer = had !== undefined && had.mr < rev;
      const isNode = cache.has(key);
      if (!newer && !isNode) continue;
      const rec = { raw: ev.kv.value.toString("utf8"), cr: ev.kv.create_revision, mr: rev };
      if (newer) records.set(sk, rec, rec.raw.length);
      if (isNode) cache.set(key, { rec }, rec.raw.length);
    }
    // A response with events has delivered every event up to its last one; its header may name a
    // later revision (a watcher catching up gets its events in several responses, each headed with
    // the store's revision). One without events is a progress answer: trusted only from an etcd
    // that sends it behind the events it covers (progressFollowsEvents).
    const last = res.events.length > 0 ? res.events[res.events.length - 1]!.kv.mod_revision : 0;
    const rev = last > 0 ? last : progressTrusted ? res.header.revision : 0;
    if (rev > fed) fed = rev;
    askedProgress = false;
    if (subs.size > 0)
      for (const group of byRevision(res.events)) {
        const r = revisionOf(o.prefix.length, group, wanted);
        for (const sub of [...subs]) sub.revision(r);
      }
  };

  const connect = async () => {
    if (stopped) return;
    if (o.cacheBytes === 0 && subs.size === 0) {
      running = false;
      return;
    }
    const gen = generation;
    try {
      // Learnt beside the stream, not before it: until etcd says its version, progress is not asked.
      progressTrusted = false;
      void ordersProgress(o.client).then((trusted) => {
        if (gen === generation) progressTrusted = trusted;
      });
      const stream = await o.rpc.watch();
      stream.on("error", () => {});
      if (stopped || gen !== generation) {
        stream.cancel();
        return;
      }
      cancel = () => stream.cancel();
      stream.on("data", (res: WatchResponse) => {
        if (gen !== generation) return;
        if (res.canceled) return down(gen, res.cancel_reason || "etcd cancelled the watch");
        if (res.created) {
          // From now on: the cache is empty, so there is nothing older to apply.
          backoff = 100;
          live = true;
          fed = res.header.revision;
          for (const sub of [...subs]) sub.live(fed);
          return;
        }
        apply(res);
      });
      stream.on("error", (err: unknown) => down(gen, err));
      stream.on("end", () => down(gen, "stream ended"));
      write = (req) => stream.write(req);
      stream.write({ create_request: { key: from, range_end: to } });
    } catch (err) {
      down(gen, err);
    }
  };

  if (running) void connect();

  return {
    record: (sk) => (o.cacheBytes === 0 ? undefined : records.get(sk)),
    noteRecord: (sk, rec) => {
      if (o.cacheBytes > 0) noteRecord(sk, rec);
    },
    dropRecords(sks) {
      if (sks === undefined) records = new SizedCache<CachedRecord>(o.cacheBytes);
      else for (const sk of sks) records.delete(sk);
    },
    get(key) {
      if (!live || o.cacheBytes === 0) return undefined;
      if (fed < o.known()) {
        // Behind what this server knows of: ask etcd where the stream is (it answers once every
        // event up to its current revision has been sent), and read from etcd meanwhile.
        if (progressTrusted && !askedProgress && write) {
          askedProgress = true;
          write({ progress_request: {} });
        }
        return undefined;
      }
      const slot = cache.get(key);
      if (!slot) return undefined;
      if (!slot.node) {
        const { raw, cr, mr } = slot.rec!;
        slot.node = nodeOf(key, JSON.parse(raw) as EtcdRecord, cr, mr);
        deepFreeze(slot.node);
        delete slot.rec;
      }
      return slot.node;
    },
    remember(key, node, rev, rawLength) {
      if (!live || fed > rev || o.cacheBytes === 0) return node;
      deepFreeze(node);
      cache.set(key, { node }, rawLength);
      return node;
    },
    fedRev: () => (live ? fed : 0),
    subscribe(sub) {
      subs.add(sub);
      if (!running) {
        running = true;
        void connect();
      } else if (live) sub.live(fed);
      return () => {
        subs.delete(sub);
        if (o.cacheBytes > 0 || subs.size > 0 || !running) return;
        // Nobody needs the stream any more: let etcd drop its watcher.
        generation++;
        running = false;
        live = false;
        fed = 0;
        write = undefined;
        cancel?.();
        cancel = undefined;
      };
    },
    close() {
      stopped = true;
      generation++;
      cancel?.();
    },
  };
}
