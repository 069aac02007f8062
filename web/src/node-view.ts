import type { Api } from "./api.js";
import { createDirView } from "./dir-view.js";
import { isDir } from "./keys.js";
import { createValueView } from "./value-view.js";
import type { Navigate, View } from "./view-parts.js";

/** The main area for a tree node: a directory's listing and actions, or a value's editor. */
export function createNodeView(api: Api, key: string, navigate: Navigate): View {
  return isDir(key) ? createDirView(api, key, navigate) : createValueView(api, key, navigate);
}
