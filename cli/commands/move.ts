import { nameOf, parseKey } from "../../tree/path.js";
import { copy, move } from "../../tree/transfer.js";
import { defineCommand, writeJson } from "../command.js";

const HELP = (verb: "move" | "copy") =>
  [
    `${verb === "move" ? "Moves" : "Copies"} a value to a value, or a directory (ending in /) with everything below it to a`,
    "directory, in one revision. A value given a directory target lands in it under its own name.",
    "An existing target needs --overwrite (it then ends up exactly as the source was);",
    verb === "move"
      ? "read-only keys move only with --force. A moved value's last version stays in its old key's history."
      : "a read-only key copies as read-only; replacing a read-only target needs --force.",
    "Prints nothing; -o json prints {from, to, revision, keys}.",
  ].join("\n");

const transferCommand = (verb: "move" | "copy") =>
  defineCommand({
    name: verb === "move" ? "mv" : "cp",
    aliases: [verb],
    usage: `${verb === "move" ? "mv" : "cp"} <src> <dst> [--overwrite] [--force]`,
    summary:
      verb === "move"
        ? "move a key or a directory in one revision"
        : "copy a key or a directory in one revision",
    help: HELP(verb),
    outputs: ["json"],
    args: { min: 2, max: 2 },
    flags: { overwrite: "bool", force: "bool" },
    flagHelp: {
      overwrite: "replace what is at <dst>",
      force: verb === "move" ? "move read-only keys, replace read-only targets" : "replace read-only targets",
    },
    async run({ positionals: [src, dst], flags }, { tree, stdout, output = "text" }) {
      const from = parseKey(src!).key;
      let to = parseKey(dst!).key;
      if (!from.endsWith("/") && to.endsWith("/")) to += nameOf(from);
      const res = await (verb === "move" ? move : copy)(tree, from, to, {
        ...(flags.overwrite === true ? { overwrite: true } : {}),
        ...(flags.force === true ? { force: true } : {}),
      });
      if (output === "json") await writeJson(stdout, { from, to, revision: res.rev, keys: res.keys });
      return 0;
    },
  });

/** `kvspace mv <src> <dst> [--overwrite] [--force]`. */
export const mvCommand = transferCommand("move");
/** `kvspace cp <src> <dst> [--overwrite] [--force]`. */
export const cpCommand = transferCommand("copy");
