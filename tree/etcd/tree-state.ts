/**
 * What the parts of one etcd tree share: its prefix, whether it is closed, and the revisions it
 * knows of (the newest etcd answered at, the oldest a watch can still replay from).
 */
import { TreeError } from "../errors.js";

export interface EtcdTreeState {
  readonly prefix: string;
  closed: boolean;
  /** The newest revision etcd answered this server at. */
  lastRev: number;
  /** The newest revision etcd is known to be compacted to (a watch from before it is TREE_COMPACTED). */
  compacted: number;
  /** The first revision a watch can replay (after an upgrade from the format with a log key). */
  firstRev: number;
  /** Notes a revision etcd answered at. */
  seeRev(rev: number): void;
  /** Notes that etcd is compacted to `rev`. */
  seeCompacted(rev: number): void;
  /** Throws TREE_CLOSED once the tree is closed. */
  ensureOpen(): void;
  /** The etcd key of a tree storage key (`sk`) under the prefix. */
  enc(sk: string): Buffer;
}

export function createTreeState(prefix: string): EtcdTreeState {
  // Arrow functions over `state`, not `this`: seeRev and ensureOpen are handed around as callbacks.
  const state: EtcdTreeState = {
    prefix,
    closed: false,
    lastRev: 0,
    compacted: 1,
    firstRev: 0,
    seeRev: (rev) => {
      if (rev > state.lastRev) state.lastRev = rev;
    },
    seeCompacted: (rev) => {
      if (rev > state.compacted) state.compacted = rev;
    },
    ensureOpen: () => {
      if (state.closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
    },
    enc: (sk) => Buffer.from(prefix + sk, "utf8"),
  };
  return state;
}
