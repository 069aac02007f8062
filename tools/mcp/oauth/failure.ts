/**
 * The SDK's ways of saying an HTTP upstream refused byteseek's credentials, as one `mcp_sign_in`
 * error that tells a person what to do (and a model that the tools wait for that person).
 */
import {
  InsufficientScopeError,
  SdkError,
  SdkErrorCode,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { ToolError } from "../../errors.js";
import { signInRequired } from "./provider.js";

/** The sign-in error `err` amounts to, or undefined when it is about something else. */
export function signInFailure(server: string, err: unknown): ToolError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ToolError) return e.code === "mcp_sign_in" ? e : undefined;
    if (UnauthorizedError.isInstance(e)) return signInRequired(server, "it refused byteseek's token");
    if (InsufficientScopeError.isInstance(e))
      return signInRequired(server, `it asks for the scopes "${e.requiredScope ?? "?"}"`);
    if (SdkError.isInstance(e) && e.code === SdkErrorCode.ClientHttpAuthentication)
      return signInRequired(server, "it refused byteseek's token, even a refreshed one");
    if (SdkError.isInstance(e) && e.code === SdkErrorCode.ClientHttpForbidden)
      return signInRequired(server, "it refused the scopes of byteseek's token");
  }
  return undefined;
}
