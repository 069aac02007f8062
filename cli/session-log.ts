/**
 * Where `byteseek run|chat` (and `run --replay`) log: never into the conversation on the terminal,
 * but to BYTESEEK_LOG_FILE, else `byteseek.log` in the store's folder, else (etcd, a server's URL)
 * stderr; at BYTESEEK_LOG_LEVEL (default warn).
 */
import { join } from "node:path";
import { type Logger, pino } from "pino";
import type { StoreSpec } from "../tree/store-config.js";

export function sessionLogger(
  env: Readonly<Record<string, string | undefined>>,
  spec: StoreSpec,
): { logger: Logger; logFile?: string } {
  const logFile =
    env.BYTESEEK_LOG_FILE || (spec.backend === "classic" ? join(spec.location, "byteseek.log") : undefined);
  const logger = pino(
    { level: env.BYTESEEK_LOG_LEVEL || "warn" },
    logFile ? pino.destination({ dest: logFile, mkdir: true, sync: true }) : pino.destination(2),
  );
  return logFile ? { logger, logFile } : { logger };
}
