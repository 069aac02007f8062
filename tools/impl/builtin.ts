import type { z } from "zod";
import type { BuiltinImpl } from "../catalogue/declaration.js";
import { ToolError } from "../errors.js";
import type { BuiltinTool, ToolContext, ToolOutput } from "../types.js";

type BuiltinImplSpec = z.infer<typeof BuiltinImpl>;

/** The registry of shipped functions, by `ref`. A duplicate ref is a programming error. */
export function builtinRegistry(builtins: readonly BuiltinTool[]): ReadonlyMap<string, BuiltinTool> {
  const map = new Map<string, BuiltinTool>();
  for (const b of builtins) {
    if (map.has(b.ref)) throw new Error(`two built-in tools share the ref "${b.ref}"`);
    map.set(b.ref, b);
  }
  return map;
}

/** Runs a `builtin` impl: the registered function, with the context the runtime built. */
export async function runBuiltinImpl(
  impl: BuiltinImplSpec,
  args: Record<string, unknown>,
  ctx: ToolContext,
  registry: ReadonlyMap<string, BuiltinTool>,
): Promise<ToolOutput> {
  const tool = registry.get(impl.ref);
  // Resolution already reports an unknown ref as `vet`; this guards a registry changed since.
  if (!tool) throw new ToolError("invalid_declaration", `no built-in "${impl.ref}" is shipped`);
  return tool.execute(args, ctx);
}
