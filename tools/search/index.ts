/**
 * A lexical index of tool declarations: BM25F over a tool's fields (its name and the name's parts,
 * title, snippet, description, guidelines, parameter names and descriptions, and an upstream MCP
 * server's name), kept current one declaration at a time. It answers in well under a millisecond
 * at thousands of tools, with no model and no network.
 */
import { tokenize } from "./tokenize.js";

/** The text of one declaration the index reads. */
export interface IndexedTool {
  name: string;
  title?: string | undefined;
  description: string;
  snippet?: string | undefined;
  guidelines?: readonly string[] | undefined;
  /** Each parameter's name and description, flattened to text. */
  params?: string | undefined;
  /** The upstream MCP server a synced tool comes from. */
  server?: string | undefined;
}

export interface SearchHit {
  name: string;
  score: number;
  /** One line saying what the tool does: its snippet, or its description's first sentence. */
  snippet: string;
}

export interface SearchOptions {
  /** At most this many hits (default 10). */
  limit?: number;
  /** Only tools this accepts (a run's view of the catalogue). */
  accept?: (name: string) => boolean;
}

export interface ToolIndex {
  /** Adds a tool, or replaces what the index knew of it. */
  upsert(tool: IndexedTool): void;
  remove(name: string): void;
  has(name: string): boolean;
  /** The names indexed, as a copy (safe to remove while iterating). */
  names(): string[];
  readonly size: number;
  /** Best first; ties by name. An empty or stopword-only query finds nothing. */
  search(query: string, options?: SearchOptions): SearchHit[];
}

/** The fields, their weights and length normalisation (b): a word in the name says most. */
const FIELDS = [
  { id: "name", weight: 5, b: 0.3 },
  { id: "title", weight: 2, b: 0.5 },
  { id: "snippet", weight: 2, b: 0.6 },
  { id: "description", weight: 1, b: 0.75 },
  { id: "guidelines", weight: 0.5, b: 0.75 },
  { id: "params", weight: 0.7, b: 0.75 },
  { id: "server", weight: 3, b: 0.2 },
] as const;
const F = FIELDS.length;
const K1 = 1.2;
/** A query word also matches longer index words it begins (`repo` → `repository`), at this weight. */
const PREFIX_WEIGHT = 0.4;
const PREFIX_MIN = 3;
const PREFIX_MAX_EXPANSIONS = 8;
/** Added when the query names the tool itself (`edit.read`, `edit_read`, `edit read`). */
const NAME_BONUS = 50;

interface Doc {
  name: string;
  /** The name as words, joined by one space: what an exact-name query is compared to. */
  nameKey: string;
  lengths: Float64Array;
  /** Each word's frequency per field: what its impacts are computed from. */
  tfs: Map<string, Float64Array>;
  snippet: string;
}

/** Impacts are recomputed when a field's mean length has moved this much since they were. */
const DRIFT = 0.1;

function fieldTexts(tool: IndexedTool): string[] {
  return [
    tool.name,
    tool.title ?? "",
    tool.snippet ?? "",
    tool.description,
    (tool.guidelines ?? []).join("\n"),
    tool.params ?? "",
    tool.server ?? "",
  ];
}

/** One line for a hit: the snippet, else the description's first sentence, cut to 160 characters. */
function lineOf(tool: IndexedTool): string {
  const text = tool.snippet ?? tool.description.split(/(?<=[.!?。！？])\s|\n/)[0] ?? "";
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 160 ? `${one.slice(0, 159)}…` : one;
}

const nameKeyOf = (text: string): string => tokenize(text).join(" ");

export function createToolIndex(): ToolIndex {
  const docs: Array<Doc | undefined> = [];
  const free: number[] = [];
  const ids = new Map<string, number>();
  /**
   * word → (doc id → its BM25F weighted frequency): the fields' frequencies, weighted and
   * normalised by length against the mean lengths in `meanUsed`, summed once at write time so a
   * search only adds numbers.
   */
  const postings = new Map<string, Map<number, number>>();
  const totalLength = new Float64Array(F);
  const meanUsed = new Float64Array(F).fill(1);
  let stale = false;
  let count = 0;
  let sortedTerms: string[] | undefined;
  let acc = new Float64Array(64);

  const mean = (f: number): number => (count > 0 ? totalLength[f]! / count : 0) || 1;

  function impact(doc: Doc, tf: Float64Array): number {
    let weighted = 0;
    for (let f = 0; f < F; f++) {
      const n = tf[f]!;
      if (n === 0) continue;
      const field = FIELDS[f]!;
      weighted += (field.weight * n) / (1 - field.b + (field.b * doc.lengths[f]!) / meanUsed[f]!);
    }
    return weighted;
  }

  /** Marks the impacts stale once a mean length drifted past DRIFT from the one they used. */
  function checkDrift(): void {
    for (let f = 0; f < F; f++) {
      const m = mean(f);
      if (Math.abs(m - meanUsed[f]!) > DRIFT * Math.max(m, meanUsed[f]!)) stale = true;
    }
  }

  function refreshImpacts(): void {
    for (let f = 0; f < F; f++) meanUsed[f] = mean(f);
    for (const [id, doc] of docs.entries()) {
      if (!doc) continue;
      for (const [term, tf] of doc.tfs) postings.get(term)!.set(id, impact(doc, tf));
    }
    stale = false;
  }

  function remove(name: string): void {
    const id = ids.get(name);
    if (id === undefined) return;
    const doc = docs[id]!;
    for (const term of doc.tfs.keys()) {
      const list = postings.get(term);
      if (!list) continue;
      list.delete(id);
      if (list.size === 0) {
        postings.delete(term);
        sortedTerms = undefined;
      }
    }
    for (let f = 0; f < F; f++) totalLength[f]! -= doc.lengths[f]!;
    docs[id] = undefined;
    ids.delete(name);
    free.push(id);
    count--;
    checkDrift();
  }

  function upsert(tool: IndexedTool): void {
    remove(tool.name);
    const id = free.pop() ?? docs.length;
    const lengths = new Float64Array(F);
    const tfs = new Map<string, Float64Array>();
    fieldTexts(tool).forEach((text, f) => {
      const words = tokenize(text);
      lengths[f] = words.length;
      totalLength[f]! += words.length;
      for (const word of words) {
        let tf = tfs.get(word);
        if (!tf) {
          tf = new Float64Array(F);
          tfs.set(word, tf);
        }
        tf[f]!++;
      }
    });
    const doc: Doc = { name: tool.name, nameKey: nameKeyOf(tool.name), lengths, tfs, snippet: lineOf(tool) };
    docs[id] = doc;
    ids.set(tool.name, id);
    count++;
    if (count === 1) for (let f = 0; f < F; f++) meanUsed[f] = mean(f);
    for (const [word, tf] of tfs) {
      let list = postings.get(word);
      if (!list) {
        list = new Map();
        postings.set(word, list);
        sortedTerms = undefined;
      }
      list.set(id, impact(doc, tf));
    }
    checkDrift();
  }

  /** Index words beginning with `prefix` (not itself), from a sorted copy of the vocabulary. */
  function expansions(prefix: string): string[] {
    sortedTerms ??= [...postings.keys()].sort();
    let lo = 0;
    let hi = sortedTerms.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sortedTerms[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < sortedTerms.length && out.length < PREFIX_MAX_EXPANSIONS; i++) {
      const t = sortedTerms[i]!;
      if (!t.startsWith(prefix)) break;
      if (t !== prefix) out.push(t);
    }
    return out;
  }

  /** The query's words with their weights: each word once per use, and prefixes of unknown words. */
  function queryWeights(words: string[]): Map<string, number> {
    const weights = new Map<string, number>();
    for (const w of words) {
      weights.set(w, (weights.get(w) ?? 0) + 1);
      // only a word the index does not hold is taken as the start of longer ones
      if (
        w.length >= PREFIX_MIN &&
        !postings.has(w) &&
        /^[\p{L}\p{N}]+$/u.test(w) &&
        w.charCodeAt(0) < 0x3000
      )
        for (const e of expansions(w)) if (!weights.has(e)) weights.set(e, PREFIX_WEIGHT);
    }
    return weights;
  }

  function search(query: string, options: SearchOptions = {}): SearchHit[] {
    const limit = options.limit ?? 10;
    if (count === 0 || limit <= 0) return [];
    const words = tokenize(query);
    if (words.length === 0) return [];
    if (stale) refreshImpacts();
    if (acc.length < docs.length) acc = new Float64Array(docs.length * 2);
    const touched: number[] = [];
    for (const [term, qWeight] of queryWeights(words)) {
      const list = postings.get(term);
      if (!list) continue;
      const idf = qWeight * Math.log(1 + (count - list.size + 0.5) / (list.size + 0.5));
      for (const [id, w] of list) {
        if (acc[id] === 0) touched.push(id);
        acc[id]! += (idf * (w * (K1 + 1))) / (w + K1);
      }
    }
    const wanted = words.join(" ");
    const top: SearchHit[] = [];
    for (const id of touched) {
      const doc = docs[id]!;
      let score = acc[id]!;
      acc[id] = 0;
      if (options.accept && !options.accept(doc.name)) continue;
      if (doc.nameKey === wanted) score += NAME_BONUS;
      if (top.length === limit && !better(score, doc.name, top[limit - 1]!)) continue;
      // insertion into the short, sorted list of the best so far
      let at = top.length === limit ? limit - 1 : top.length;
      while (at > 0 && better(score, doc.name, top[at - 1]!)) at--;
      top.splice(at, 0, { name: doc.name, score, snippet: doc.snippet });
      if (top.length > limit) top.pop();
    }
    return top.map((h) => ({ ...h, score: Math.round(h.score * 1000) / 1000 }));
  }

  return {
    upsert,
    remove,
    has: (name) => ids.has(name),
    names: () => [...ids.keys()],
    get size() {
      return count;
    },
    search,
  };
}

/** Does (score, name) rank before `hit`? Higher scores first, then names in order. */
function better(score: number, name: string, hit: SearchHit): boolean {
  return score > hit.score || (score === hit.score && name < hit.name);
}
