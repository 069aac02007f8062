import { zodProblems } from "../../tools/catalogue/declaration.js";
import { POLICY_KEY, Policy } from "../../tools/gate/policy.js";
import { grantOf } from "../../tools/gate/powers.js";
import { SANDBOX_OFF_WARNING } from "../../tools/sandbox/settings.js";
import { defineCommand, writeLine } from "../command.js";
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
  async run({ flags }, { tree, stdout, stderr, env, cwd, signal }) {
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
    const list = (items: readonly string[] | undefined) => (items?.length ? items.join(",") : "-");
    const workspace = await cliWorkspace(env, cwd, signal);
    const lines: Array<[string, string]> = [
      // where the file tools work: the first thing to know when a read answers "does not exist"
      ["workspace", workspace ?? "-"],
      ["grant", rule],
      ["read", String(grant.read)],
      ["write", String(grant.write)],
      ["exec", String(grant.exec)],
      ["model", String(grant.model)],
      ["net", list([...grant.net, ...(policy.httpHosts ?? [])])],
      ["tree", list(grant.tree)],
      ["confirm", list(policy.confirm)],
      ["approved", list(policy.approved)],
      ["deny", list(policy.deny)],
      ["denyKeys", list(policy.denyKeys)],
      ["workspaceRoots", list(policy.workspaceRoots)],
      ["approvalTimeoutMs", String(policy.approvalTimeoutMs)],
      ["sandbox", policy.sandbox],
    ];
    if (policy.agentImpls) lines.push(["agentImpls", list(policy.agentImpls)]);
    for (const [k, v] of lines) await writeLine(stdout, `${k}\t${v}`);
    if (policy.sandbox === "off") await writeLine(stderr, SANDBOX_OFF_WARNING);
    return 0;
  },
});
