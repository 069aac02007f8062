/**
 * The server's wire shapes, as types: declared once with zod in tree/http/schemas.ts (which
 * depends on nothing Node-only), imported here as types only, so nothing of it reaches the page.
 */
export type {
  ChildJson,
  HistoryJson,
  HistoryListJson,
  ListJson,
  NodeJson,
  WatchBatchJson,
  WatchEventJson,
  WriteJson,
} from "../../tree/http/schemas.js";
