import { printable } from "../../tools/printable.js";
import { approvalLines } from "../approval-view.js";
import { defineCommand, writeLine } from "../command.js";

/**
 * `kvspace approvals`: the calls waiting for a person, embedded or over HTTP. Per approval a line
 * `<vid>/<n>\t<tool>\t<what runs>` then, indented, why it waits, who declared it and its hash, the
 * arguments and any diff — every value neutralised (no control character or escape sequence of a
 * tool's arguments reaches the terminal as such).
 */
export const approvalsCommand = defineCommand({
  name: "approvals",
  usage: "approvals",
  summary: "list the calls waiting for a person's approval, with what each would run",
  args: { min: 0, max: 0 },
  async run(_input, { tools, stdout, signal }) {
    const pending = await (await tools()).pending(signal);
    if (pending.length === 0) {
      await writeLine(stdout, "nothing waits for approval");
      return 0;
    }
    for (const { key, entry } of pending) {
      const id = key.replace("/byteseek/approval/", "");
      const lines = approvalLines(entry);
      const runs = lines.find((l) => l.startsWith("runs: "))?.slice("runs: ".length) ?? "-";
      await writeLine(stdout, `${id}\t${printable(entry.tool)}\t${runs}`);
      for (const l of lines.filter((l) => !l.startsWith("runs: "))) await writeLine(stdout, `  ${l}`);
    }
    return 0;
  },
});
