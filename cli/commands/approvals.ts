import { dirs, idOf } from "../../shared/keys.js";
import { printable } from "../../tools/catalogue/printable.js";
import { docs } from "../../tools/doc/docs.js";
import { readDoc } from "../../tools/doc/read-write.js";
import { approvalKey } from "../../tools/gate/approvals.js";
import { approvalLines, decisionLine } from "../approval-view.js";
import { defineCommand, writeJson, writeLine } from "../command.js";

/**
 * `kvspace approvals [<vid>/<n>]`: the calls waiting for a person, embedded or over HTTP (or one
 * approval in any state, with its decision and the credential it came through). Per approval a line
 * `<vid>/<n>\t<tool>\t<what runs>` then, indented, why it waits, who declared it and its hash, the
 * arguments and any diff — every value neutralised (no control character or escape sequence of a
 * tool's arguments reaches the terminal as such).
 */
export const approvalsCommand = defineCommand({
  name: "approvals",
  usage: "approvals [<vid>/<n>]",
  summary: "list the calls waiting for a person's approval, with what each would run",
  help: [
    "Without an id: every approval still waiting. With one (e.g. run7/0): that approval whatever its",
    "state, and once decided who decided it and through which credential (decided: approved once by",
    "person (http) via bearer token sha256:…).",
    "-o json: {pending: [{key, entry}]} as GET /v1/approvals answers; with an id {key, entry}",
    "({key, absent: true} and exit 1 when there is none). -o ndjson: one {key, entry} a line.",
    "The entry is stored as is (its tool's arguments unescaped: JSON quotes them).",
  ].join("\n"),
  args: { min: 0, max: 1 },
  outputs: ["json", "ndjson"],
  async run({ positionals: [id] }, { tools, tree, stdout, signal, output = "text" }) {
    if (id !== undefined) {
      const key = approvalKey(id);
      const entry = await readDoc(tree, docs.approval, key);
      if (!entry) {
        await (output === "text"
          ? writeLine(stdout, `${id}\t(nil)`)
          : writeJson(stdout, { key, absent: true }));
        return 1;
      }
      if (output !== "text") {
        await writeJson(stdout, { key, entry });
        return 0;
      }
      await writeLine(stdout, `${id}\t${printable(entry.tool)}\t${printable(entry.state)}`);
      const decided = decisionLine(entry);
      for (const l of [...(decided ? [decided] : []), ...approvalLines(entry)])
        await writeLine(stdout, `  ${l}`);
      return 0;
    }
    const pending = await (await tools()).pending(signal);
    if (output === "json") {
      await writeJson(stdout, { pending });
      return 0;
    }
    if (output === "ndjson") {
      for (const p of pending) await writeJson(stdout, p);
      return 0;
    }
    if (pending.length === 0) {
      await writeLine(stdout, "nothing waits for approval");
      return 0;
    }
    for (const { key, entry } of pending) {
      const id = idOf(dirs.approvals, key);
      const lines = approvalLines(entry);
      const runs = lines.find((l) => l.startsWith("runs: "))?.slice("runs: ".length) ?? "-";
      await writeLine(stdout, `${id}\t${printable(entry.tool)}\t${runs}`);
      for (const l of lines.filter((l) => !l.startsWith("runs: "))) await writeLine(stdout, `  ${l}`);
    }
    return 0;
  },
});
