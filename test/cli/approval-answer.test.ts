import { describe, expect, it } from "vitest";
import { decisionOf } from "../../cli/approval-answer.js";

describe("the inline approval question of byteseek run and chat", () => {
  it("maps y, r, a and n to once, this run, always and a denial; anything else decides nothing", () => {
    expect(decisionOf("y")).toEqual({ decision: "approve", scope: "once" });
    expect(decisionOf(" Yes\n")).toEqual({ decision: "approve", scope: "once" });
    expect(decisionOf("r")).toEqual({ decision: "approve", scope: "run" });
    expect(decisionOf("a")).toEqual({ decision: "approve", scope: "always" });
    expect(decisionOf("n")).toMatchObject({ decision: "deny" });
    expect(decisionOf("")).toBeUndefined();
    expect(decisionOf("maybe")).toBeUndefined();
  });
});
