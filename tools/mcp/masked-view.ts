/** A tree value as a search may read it: an MCP registry entry's secret fields masked (secret-fields.ts). */
import type { TreeValue } from "../../tree/value.js";
import { maskSecrets } from "./secret-fields.js";

export function maskedView(key: string, value: TreeValue): TreeValue {
  if (value.kind !== "json") return value;
  const masked = maskSecrets(key, value.value);
  return masked === value.value ? value : { kind: "json", value: masked };
}
