import { zodProblems } from "../../tools/catalogue/declaration.js";
import { POLICY_KEY, Policy } from "../../tools/gate/policy.js";
import { grantOf } from "../../tools/gate/powers.js";
import { SANDBOX_OFF_WARNING } from "../../tools/sandbox/settings.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import { cliWorkspace } from "../workspace-of.js";

/**
 * `kvspace policy [--vid V]`: the workspace the file tools work in (cli/workspace-of.ts), what the policy grants run V (default: a run no entry of
 * grants.runs names) and the rules every call meets, one `name<TAB>value` line each; lists are
 * comma-separated, `-` when empty. The policy itself is `kvspace get /byteseek/policy`. A policy
 * that turns the sandbox off says so on stderr too: commands then run with the server's own rights.
 */
export const policyCommand = defineCommand({
  name: "policy",
  usage: "policy [--vid V]",
  summary: "print the powers the policy grants a run, and its other rules",
  args: { min: 0, max: 0 },
  flags: { vid: "value" },
  flagHelp: { vid: "the run whose powers to print (default: a run no entry of grants.runs names)" },
  help: [
    "Prints name<TAB>value lines: workspace, grant (the rule that applies), read, write, exec, model,",
    "net, tree, confirm, approved, deny, denyKeys, workspaceRoots, approvalTimeoutMs, sandbox[, agentImpls];",
    "lists comma-separated, - when empty (the workspace: - when a server does not say).",
    "-o json: one object of the same names, lists as arrays, numbers and booleans as such, workspace null when unknown.",
  ].join("\n"),
  outputs: ["json"],
  async run({ flags }, { tree, stdout, stderr, env, cwd, signal, output = "text" }) {
    const node = await tree.get(POLICY_KEY);
    const parsed = Policy.safeParse(node?.kind === "json" ? node.value.value : {});
    if (!parsed.success)
      throw new CliError(
        "CLI_INPUT",
        `the policy at ${POLICY_KEY} is invalid, so every call is denied: ${zodProblems(parsed.error, Policy).join("; ")}`,
      );
    const policy = parsed.data;
    const vid = typeof flags.vid === "string" ? flags.vid : "";
    const { grant, rule } = grantOf(policy.grants, vid);
    const workspace = await cliWorkspace(env, cwd, signal);
    const fields: Record<string, string | number | boolean | null | readonly string[]> = {
      // where the file tools work: the first thing to know when a read answers "does not exist"
      workspace: workspace ?? null,
      grant: rule,
      read: grant.read,
      write: grant.write,
      exec: grant.exec,
      model: grant.model,
      net: [...grant.net, ...(policy.httpHosts ?? [])],
      tree: grant.tree,
      confirm: policy.confirm ?? [],
      approved: policy.approved ?? [],
      deny: policy.deny ?? [],
      denyKeys: policy.denyKeys ?? [],
      workspaceRoots: policy.workspaceRoots ?? [],
      approvalTimeoutMs: policy.approvalTimeoutMs,
      sandbox: policy.sandbox,
      ...(policy.agentImpls ? { agentImpls: policy.agentImpls } : {}),
    };
    if (output === "json") await writeJson(stdout, fields);
    else for (const [k, v] of Object.entries(fields)) await writeLine(stdout, `${k}\t${textOf(v)}`);
    if (policy.sandbox === "off") await writeLine(stderr, SANDBOX_OFF_WARNING);
    return 0;
  },
});

/** A value as its text line shows it: a list comma-separated, `-` when empty or unknown. */
function textOf(v: string | number | boolean | null | readonly string[]): string {
  if (v === null) return "-";
  if (typeof v === "object") return v.length ? v.join(",") : "-";
  return String(v);
}
