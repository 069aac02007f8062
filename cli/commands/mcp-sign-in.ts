/**
 * `kvspace mcp login <server> [--paste | --device]` and `kvspace mcp logout <server>`: a person signs byteseek
 * in to an HTTP MCP server that asks for OAuth, once; the tokens are kept in the server's registry
 * entry (a secret field) and renewed before they expire. The sign-in writes the tree this command
 * opened (a folder, or a byteseek server over HTTP), so the server's runs use it at once.
 */
import { createInterface } from "node:readline";
import { signInWithDevice } from "../../tools/mcp/oauth/device.js";
import { signInWithLoopback } from "../../tools/mcp/oauth/loopback.js";
import { beginSignIn, finishSignIn, signOut } from "../../tools/mcp/oauth/sign-in.js";
import { type CommandContext, writeJson, writeLine } from "../command.js";
import { openUrl } from "../open-url.js";

/** Where the authorization server sends the browser in --paste mode: nothing listens, the person copies the URL. */
export const PASTE_REDIRECT_URI = "http://127.0.0.1/callback";

export async function mcpLogin(
  server: string,
  how: "loopback" | "paste" | "device",
  ctx: CommandContext,
): Promise<number> {
  const { tree, stderr } = ctx;
  const json = ctx.output === "json";
  // with -o json, the text for the person goes to stderr (a sink with -q) and stdout is the script's:
  // a JSON line saying what to open (so -q -o json still shows it), then the result's line
  const stdout = json ? stderr : ctx.stdout;
  const toOpen = (what: Record<string, unknown>) =>
    json ? writeJson(ctx.stdout, { server, ...what }) : undefined;
  let signedIn: { expiresAt?: number; scope?: string };
  if (how === "device") {
    signedIn = await signInWithDevice(tree, server, {
      signal: ctx.signal,
      async show(p) {
        await toOpen({ ...p });
        const until = new Date(p.expiresAt).toISOString();
        await writeLine(
          stdout,
          `on any device, go to ${p.verificationUri} and enter the code ${p.userCode} (before ${until}; waiting)${p.verificationUriComplete ? `\nor open ${p.verificationUriComplete}` : ""}`,
        );
      },
    });
  } else if (how === "paste") {
    const begun = await beginSignIn(tree, server, PASTE_REDIRECT_URI);
    await toOpen({ authorizationUrl: begun.authorizationUrl });
    await writeLine(stdout, `open this URL in a browser and sign in:\n${begun.authorizationUrl}`);
    await writeLine(
      stdout,
      "the browser then fails to load a page on 127.0.0.1: paste that page's whole URL (its address bar) here:",
    );
    const line = await firstLine(ctx);
    signedIn = await finishSignIn(tree, server, line.trim());
  } else {
    signedIn = await signInWithLoopback(tree, server, {
      signal: ctx.signal,
      async open(url) {
        await toOpen({ authorizationUrl: url });
        const opened = openUrl(url, ctx.env);
        await writeLine(
          stdout,
          `${opened ? "the browser opens this URL; if it does not, open it" : "open this URL"} in a browser and sign in (waiting for the redirect):\n${url}`,
        );
      },
    });
  }
  const expiry = signedIn.expiresAt
    ? `, token valid until ${new Date(signedIn.expiresAt).toISOString()}`
    : "";
  if (!json)
    await writeLine(
      stdout,
      `${server}\tsigned in${signedIn.scope ? ` (scopes ${signedIn.scope})` : ""}${expiry}`,
    );
  const [report] = await (await ctx.tools()).mcpSync(server);
  if (json)
    await writeJson(ctx.stdout, {
      server,
      signedIn: true,
      ...(signedIn.expiresAt ? { expiresAt: signedIn.expiresAt } : {}),
      ...(signedIn.scope ? { scope: signedIn.scope } : {}),
      ...(report ? { sync: report } : {}),
    });
  if (!report?.ok) stderr.write(`${server}: ${report?.error ?? "the sync failed"}\n`);
  else if (!json) await writeLine(stdout, `${server}\tsynced\t${report.tools} tools`);
  return 0;
}

export async function mcpLogout(server: string, ctx: CommandContext): Promise<number> {
  const had = await signOut(ctx.tree, server);
  await (ctx.output === "json"
    ? writeJson(ctx.stdout, { server, signedOut: had })
    : writeLine(ctx.stdout, `${server}\t${had ? "signed out" : "was not signed in"}`));
  return 0;
}

async function firstLine(ctx: CommandContext): Promise<string> {
  const rl = createInterface({ input: ctx.stdin });
  try {
    for await (const line of rl) if (line.trim()) return line;
  } finally {
    rl.close();
  }
  throw new Error("no URL was pasted (stdin ended)");
}
