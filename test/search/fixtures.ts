/** A person's `shell` declaration described by `description` (also its snippet): what the search tests index. */
export function describedTool(name: string, description: string): Record<string, unknown> {
  return {
    name,
    description,
    snippet: description,
    params: { type: "object" },
    impl: { kind: "shell", argv: ["true"] },
  };
}
