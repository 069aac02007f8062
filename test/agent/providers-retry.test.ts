import { describe, expect, it } from "vitest";
import { backoffDelay, parseRetryAfter } from "../../agent/providers/retry.js";

describe("Retry-After", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");

  it("reads seconds", () => {
    expect(parseRetryAfter({ "retry-after": "3" }, now)).toBe(3000);
  });

  it("reads an HTTP date as the time left until it", () => {
    expect(parseRetryAfter({ "retry-after": "Wed, 01 Jan 2025 00:00:07 GMT" }, now)).toBe(7000);
    expect(parseRetryAfter({ "retry-after": "Tue, 31 Dec 2024 23:59:00 GMT" }, now)).toBe(0);
  });

  it("prefers retry-after-ms when the server sends it", () => {
    expect(parseRetryAfter({ "retry-after-ms": "250", "retry-after": "3" }, now)).toBe(250);
  });

  it("is undefined when absent or unreadable", () => {
    expect(parseRetryAfter({}, now)).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": "soon" }, now)).toBeUndefined();
  });
});

describe("backoff", () => {
  it("doubles each retry, with jitter between half and all of the step", () => {
    const options = { baseDelayMs: 100, maxDelayMs: 10_000 };
    expect(backoffDelay(0, options, () => 0)).toBe(50);
    expect(backoffDelay(0, options, () => 1)).toBe(100);
    expect(backoffDelay(3, options, () => 0)).toBe(400);
    expect(backoffDelay(3, options, () => 1)).toBe(800);
  });

  it("never exceeds the cap", () => {
    expect(backoffDelay(30, { baseDelayMs: 100, maxDelayMs: 2000 }, () => 1)).toBe(2000);
  });
});
