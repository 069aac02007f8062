/** Reading the conditional headers: `If-Match` and `If-None-Match` carry a version as the ETag. */
import { ServerError } from "./errors.js";

/** The ETag of a version: a strong, quoted entity tag. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** A condition header: absent, `*`, or one version (`"3"`, `3` or `W/"3"`). */
export type Condition = undefined | "*" | number;

export function parseCondition(name: string, raw: string | string[] | undefined): Condition {
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw.join(",") : raw).trim();
  if (text === "*") return "*";
  const m = /^(?:W\/)?"?([0-9]{1,15})"?$/.exec(text);
  if (!m)
    throw new ServerError(
      "HTTP_INVALID_HEADER",
      `${name} must be * or one version (the ETag a GET answered, e.g. "3"), got ${JSON.stringify(text.slice(0, 60))}`,
      { header: name },
    );
  return Number(m[1]);
}
