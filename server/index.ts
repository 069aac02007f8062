export { type App, type AppDeps, buildApp, DEFAULT_BODY_LIMIT } from "./app.js";
export {
  type ErrorBody,
  type ErrorCode,
  mapError,
  ServerError,
  type ServerErrorCode,
  STATUS_OF,
} from "./errors.js";
export { keyFromUrl, keyToUrlPath } from "./key-path.js";
export {
  isLoopback,
  type RunningServer,
  readConfig,
  type ServerConfig,
  type StartServerOptions,
  startServer,
} from "./main.js";
