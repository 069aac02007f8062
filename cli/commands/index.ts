import type { CommandSpec } from "../command.js";
import { appendCommand } from "./append.js";
import { approvalsCommand } from "./approvals.js";
import { approveCommand, denyCommand } from "./approve.js";
import { callCommand } from "./call.js";
import { clearCommand } from "./clear.js";
import { delCommand } from "./del.js";
import { deltreeCommand } from "./deltree.js";
import { exportCommand } from "./export.js";
import { getCommand } from "./get.js";
import { grepCommand } from "./grep.js";
import { headCommand } from "./head.js";
import { historyCommand } from "./history.js";
import { importCommand } from "./import.js";
import { listCommand } from "./list.js";
import { mcpCommand } from "./mcp.js";
import { mkindexCommand } from "./mkindex.js";
import { cpCommand, mvCommand } from "./move.js";
import { policyCommand } from "./policy.js";
import { promptCommand } from "./prompt.js";
import { runsCommand } from "./runs.js";
import { setCommand } from "./set.js";
import { toolsCommand } from "./tools.js";
import { treeCommand } from "./tree.js";
import { watchCommand } from "./watch.js";

/** Every kvspace subcommand, in the order `kvspace help` lists them. A new one is one line here. */
export const COMMANDS: readonly CommandSpec[] = [
  getCommand,
  setCommand,
  headCommand,
  delCommand,
  deltreeCommand,
  mvCommand,
  cpCommand,
  mkindexCommand,
  clearCommand,
  listCommand,
  treeCommand,
  grepCommand,
  appendCommand,
  watchCommand,
  historyCommand,
  exportCommand,
  importCommand,
  callCommand,
  toolsCommand,
  promptCommand,
  approvalsCommand,
  approveCommand,
  denyCommand,
  policyCommand,
  mcpCommand,
  runsCommand,
];

export {
  appendCommand,
  approvalsCommand,
  approveCommand,
  callCommand,
  clearCommand,
  cpCommand,
  delCommand,
  deltreeCommand,
  denyCommand,
  exportCommand,
  getCommand,
  grepCommand,
  headCommand,
  historyCommand,
  importCommand,
  listCommand,
  mcpCommand,
  mkindexCommand,
  mvCommand,
  policyCommand,
  promptCommand,
  runsCommand,
  setCommand,
  toolsCommand,
  treeCommand,
  watchCommand,
};
