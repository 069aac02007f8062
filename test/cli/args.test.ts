import { describe, expect, it } from "vitest";
import { parseArgs } from "../../cli/args.js";
import { isCliError } from "../../cli/errors.js";

const list = {
  usage: "list|ls [--kind=false] <dir/>",
  args: { min: 1, max: 1 },
  flags: { kind: "bool" },
} as const;
const watch = {
  usage: "watch <dir/> [--from REV]",
  args: { min: 1, max: 1 },
  flags: { from: "value" },
} as const;

function usageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (isCliError(err, "CLI_USAGE")) return `${err.message} (exit ${err.exitCode})`;
    throw err;
  }
  throw new Error("no usage error");
}

describe("kvspace argument parsing", () => {
  it("reads bool flags as --name, --name=true and --name=false, anywhere on the line", () => {
    expect(parseArgs(list, ["--kind=false", "/a/"])).toEqual({
      positionals: ["/a/"],
      flags: { kind: false },
    });
    expect(parseArgs(list, ["/a/", "--kind"])).toEqual({ positionals: ["/a/"], flags: { kind: true } });
    expect(parseArgs(list, ["--kind=true", "/a/"]).flags).toEqual({ kind: true });
  });

  it("never lets a bool flag swallow the next argument", () => {
    expect(parseArgs(list, ["--kind", "/a/"])).toEqual({ positionals: ["/a/"], flags: { kind: true } });
  });

  it("reads value flags as --name V and --name=V", () => {
    expect(parseArgs(watch, ["/", "--from", "7"]).flags).toEqual({ from: "7" });
    expect(parseArgs(watch, ["--from=8", "/"]).flags).toEqual({ from: "8" });
  });

  it("treats everything after -- and a lone - as positionals", () => {
    const anything = { usage: "x", args: { min: 0 } };
    expect(parseArgs(anything, ["-", "--", "--kind"]).positionals).toEqual(["-", "--kind"]);
  });

  it("answers a usage error (exit 2) for unknown flags, bad bool values, missing values and wrong arity", () => {
    const usage = "usage: kvspace list|ls [--kind=false] <dir/> (exit 2)";
    expect(usageOf(() => parseArgs(list, ["--frob", "/a/"]))).toBe(usage);
    expect(usageOf(() => parseArgs(list, ["--kind=maybe", "/a/"]))).toBe(usage);
    expect(usageOf(() => parseArgs(list, []))).toBe(usage);
    expect(usageOf(() => parseArgs(list, ["/a/", "/b/"]))).toBe(usage);
    expect(usageOf(() => parseArgs(watch, ["/", "--from"]))).toBe(
      "usage: kvspace watch <dir/> [--from REV] (exit 2)",
    );
  });

  it("does not take inherited object keys for flags", () => {
    expect(usageOf(() => parseArgs(list, ["--toString", "/a/"]))).toBe(
      "usage: kvspace list|ls [--kind=false] <dir/> (exit 2)",
    );
  });
});
